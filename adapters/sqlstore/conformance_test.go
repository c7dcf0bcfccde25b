package sqlstore_test

import (
	"testing"

	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/approval/approvaltest"
)

// The approval layer's conformance suite, on each database.

func TestSQLiteConformance(t *testing.T) {
	approvaltest.TestStore(t, func(t *testing.T) approval.Store {
		s, _ := sqlitePair(t)
		return s
	})
}

func TestPostgresConformance(t *testing.T) {
	postgres(t)
	approvaltest.TestStore(t, func(t *testing.T) approval.Store {
		s, _ := postgresPair(t)
		return s
	})
}
