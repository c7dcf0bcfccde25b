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
	// And so do the call records, whose table CreateTables made.
	testCallRecordsWork(t, s, r)
}

// The tables of the version before call records: the nonces table with its
// op and cancelled columns, and no call records table. CreateTables, run
// by two processes of the new version at once, adds the table; the
// approvals and nonces stay as they were; and a process of the earlier
// version, which knows nothing of call records, shares the tables on.
func TestSQLiteMigratesTablesWithoutCallRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "previous.db")
	testMigratesWithoutCallRecords(t, openSQLite(t, path), openSQLite(t, path), "toolmw_", "BLOB")
}

func TestPostgresMigratesTablesWithoutCallRecords(t *testing.T) {
	pg := postgres(t)
	testMigratesWithoutCallRecords(t, pg.open(t), pg.open(t), freshPrefix(), "BYTEA")
}

func testMigratesWithoutCallRecords(t *testing.T, db, db2 *sql.DB, prefix, blob string) {
	ctx := context.Background()
	// The previous version's CreateTables, verbatim.
	for _, q := range []string{
		"CREATE TABLE IF NOT EXISTS " + prefix + "approvals (id " + blob + " PRIMARY KEY, body " + blob + " NOT NULL, saved_at BIGINT NOT NULL)",
		"CREATE TABLE IF NOT EXISTS " + prefix + "approval_nonces (nonce " + blob + " PRIMARY KEY, used_at BIGINT NOT NULL, " +
			"op TEXT, cancelled TEXT NOT NULL DEFAULT '')",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// A process of the previous version used them: its store is this
	// version's without the call records, as far as the two tables go.
	prev, err := sqlstore.New(db, sqlstore.WithTablePrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	mustSave(t, prev, "appr-old", nil, []byte("old row"))
	if err := prev.Consume(ctx, "nonce-old", "op_1"); err != nil {
		t.Fatal(err)
	}

	stores := make([]*sqlstore.Store, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
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
			t.Fatalf("CreateTables over the previous version's tables: %v", err)
		}
	}
	s, r := stores[0], stores[1]
	if err := r.CreateTables(ctx); err != nil {
		t.Fatalf("CreateTables again: %v", err)
	}
	mustLoad(t, r, "appr-old", "old row")
	if err := r.Consume(ctx, "nonce-old", "op_2"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("the previous version's nonce: %v, want ErrConsumed", err)
	}
	testCallRecordsWork(t, s, r)
	// The approvals go on meanwhile, with the previous version's statements.
	if err := prev.Consume(ctx, "nonce-new", "op_1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "nonce-new", "op_2"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a nonce consumed next to the new version: %v, want ErrConsumed", err)
	}
}

// testCallRecordsWork makes, finishes and reads back a call record
// through two stores over the same tables.
func testCallRecordsWork(t *testing.T, s, r *sqlstore.Store) {
	t.Helper()
	ctx := context.Background()
	mustClaim(t, s.CallRecords(), run1, key1, claim(opA, t0, false))
	if err := s.CallRecords().Finish(ctx, run1, key1, opA, []byte("ok"), t0, window); err != nil {
		t.Fatalf("Finish on the migrated database: %v", err)
	}
	wantDone(t, mustClaim(t, r.CallRecords(), run1, key1, claim(opB, t0, false)), opA, "ok")
}

// Processes starting at once all run CreateTables on a database without
// the tables: each succeeds. PostgreSQL's CREATE TABLE IF NOT EXISTS fails
// for all but one of the sessions creating one table at the same moment;
// before CreateTables ran it again, 40 rounds of 8 failed 60 times.
func TestPostgresCreateTablesRace(t *testing.T) {
	pg := postgres(t)
	dbs := []*sql.DB{pg.open(t), pg.open(t)}
	const rounds, processes = 10, 8
	for range rounds {
		prefix := freshPrefix()
		var wg sync.WaitGroup
		errs := make([]error, processes)
		for i := range processes {
			s, err := sqlstore.New(dbs[i%2], sqlstore.WithTablePrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { errs[i] = s.CreateTables(context.Background()) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("CreateTables in one of %d processes starting at once: %v", processes, err)
			}
		}
	}
}
