package runlimittest_test

import (
	"testing"

	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/runlimit/runlimittest"
)

func TestMemStore(t *testing.T) {
	runlimittest.TestStore(t, func(*testing.T) runlimit.Store { return &runlimittest.MemStore{} })
}
