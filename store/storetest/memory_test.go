package storetest_test

import (
	"testing"

	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/store/storetest"
)

func TestMemResults(t *testing.T) {
	storetest.TestResults(t, func(*testing.T) store.Results { return &storetest.MemResults{} })
}
