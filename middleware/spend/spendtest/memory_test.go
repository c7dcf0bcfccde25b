package spendtest_test

import (
	"testing"

	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/spend/spendtest"
)

func TestMemStore(t *testing.T) {
	spendtest.TestStore(t, func(*testing.T) spend.Store { return &spendtest.MemStore{} })
}
