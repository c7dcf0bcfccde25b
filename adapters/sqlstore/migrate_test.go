package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/approval/approvaltest"
)

// The tables of a store made before Consume recorded its operation: the
// nonces table had no op and no cancelled column.
func TestSQLiteMigratesOldTables(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	testMigratesOldTables(t, openSQLite(t, path), openSQLite(t, path), "toolmw_", "?")
}

func TestPostgresMigratesOldTables(t *testing.T) {
	pg := postgres(t)
	testMigratesOldTables(t, pg.open(t), pg.open(t), freshPrefix(), "$")
}

func testMigratesOldTables(t *testing.T, db, db2 *sql.DB, prefix, placeholder string) {
	ctx := context.Background()
	blob := "BLOB"
	if placeholder == "$" {
		blob = "BYTEA"
	}
	// The old tables, with a nonce an old process consumed.
	for _, q := range []string{
		"CREATE TABLE " + prefix + "approvals (id " + blob + " PRIMARY KEY, body " + blob + " NOT NULL, saved_at BIGINT NOT NULL)",
		"CREATE TABLE " + prefix + "approval_nonces (nonce " + blob + " PRIMARY KEY, used_at BIGINT NOT NULL)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	oldConsume := "INSERT INTO " + prefix + "approval_nonces (nonce, used_at) VALUES (?, 1) ON CONFLICT DO NOTHING"
	if placeholder == "$" {
		oldConsume = "INSERT INTO " + prefix + "approval_nonces (nonce, used_at) VALUES ($1, 1) ON CONFLICT DO NOTHING"
	}
	oldProcess := func(nonce string) int64 {
		t.Helper()
		res, err := db.ExecContext(ctx, oldConsume, []byte(nonce))
		if err != nil {
			t.Fatal(err)
		}
		n, _ := res.RowsAffected()
		return n
	}
	if oldProcess("legacy") != 1 {
		t.Fatal("the old process's Consume did not insert")
	}

	// Two processes of the new version start at once and migrate.
	stores := make([]*sqlstore.Store, 2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, d := range []*sql.DB{db, db2} {
		s, err := sqlstore.New(d, sqlstore.WithTablePrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
		wg.Go(func() { errs[i] = s.CreateTables(ctx) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("CreateTables over the old tables: %v", err)
		}
	}
	s, r := stores[0], stores[1]
	if err := s.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables again: %v", err)
	}

	// The old process's nonce stays consumed, whatever is cancelled.
	if err := s.Consume(ctx, "legacy", "op_1"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("the nonce an old process consumed: %v, want ErrConsumed", err)
	}
	if err := r.Cancel(ctx, "legacy", "op_1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "legacy", "op_2"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("the nonce an old process consumed, after a Cancel: %v, want ErrConsumed", err)
	}
	// An old process still running next to the new ones: what it consumes
	// stays consumed, and a nonce the new ones freed it takes for consumed.
	if oldProcess("old-after") != 1 {
		t.Fatal("the old process's Consume did not insert")
	}
	if err := r.Consume(ctx, "old-after", "op_1"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a nonce the old process consumed after the migration: %v, want ErrConsumed", err)
	}
	if err := s.Consume(ctx, "freed", "op_1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Cancel(ctx, "freed", "op_1"); err != nil {
		t.Fatal(err)
	}
	if oldProcess("freed") != 0 {
		t.Fatal("the old process consumed a nonce the new ones hold a record of")
	}
	if oldProcess("new-nonce") != 1 || s.Consume(ctx, "new-nonce", "op_1") == nil {
		t.Fatal("a nonce the old process consumed was consumed again")
	}

	// The approval cycle runs on the migrated tables.
	var runs atomic.Int64
	rep := approvaltest.NewReplica(s, testKey, &runs)
	rep.Approve(t, "call_1")
	other := approvaltest.NewReplica(r, testKey, &runs)
	if err := other.Call("call_1"); err != nil || runs.Load() != 1 {
		t.Fatalf("the approved call on the migrated tables: %v, %d executions", err, runs.Load())
	}
}
