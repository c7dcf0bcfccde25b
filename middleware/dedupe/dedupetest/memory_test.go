package dedupetest_test

import (
	"testing"

	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/dedupe/dedupetest"
)

func TestMemStore(t *testing.T) {
	t.Parallel()
	dedupetest.TestStore(t, func(*testing.T) dedupe.Store { return new(dedupetest.MemStore) })
}
