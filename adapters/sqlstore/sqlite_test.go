package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/approval"
)

// sqliteDSN opens path with the settings the package documentation
// recommends for several processes: WAL, and a busy timeout so that a
// writer waits for the file lock instead of failing with SQLITE_BUSY.
func sqliteDSN(path string) string {
	return "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
}

// openSQLite opens the SQLite file path as a new *sql.DB, closed when the
// test ends.
func openSQLite(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newSQLiteStore returns a store over db with its tables created.
func newSQLiteStore(t testing.TB, db *sql.DB, opts ...sqlstore.Option) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.New(db, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// sqlitePair returns two stores over one new SQLite file, each with its own
// *sql.DB: two replicas.
func sqlitePair(t *testing.T) (*sqlstore.Store, *sqlstore.Store) {
	path := filepath.Join(t.TempDir(), "approvals.db")
	return newSQLiteStore(t, openSQLite(t, path)), newSQLiteStore(t, openSQLite(t, path))
}

func TestSQLiteContract(t *testing.T) {
	testContract(t, sqlitePair)
}

func TestSQLiteDetectsDialect(t *testing.T) {
	s := newSQLiteStore(t, openSQLite(t, filepath.Join(t.TempDir(), "a.db")))
	if s.Dialect() != sqlstore.SQLite {
		t.Fatalf("Dialect() = %v, want sqlite", s.Dialect())
	}
	if a, n := s.Tables(); a != "toolmw_approvals" || n != "toolmw_approval_nonces" {
		t.Fatalf("Tables() = %q, %q", a, n)
	}
}

// Two stores with different prefixes in one database do not see each
// other's rows.
func TestSQLiteTablePrefix(t *testing.T) {
	db := openSQLite(t, filepath.Join(t.TempDir(), "a.db"))
	a := newSQLiteStore(t, db, sqlstore.WithTablePrefix("tenant_a_"))
	b := newSQLiteStore(t, db, sqlstore.WithTablePrefix("tenant_b_"))
	ctx := context.Background()
	mustSave(t, a, "id", nil, []byte("a"))
	mustSave(t, b, "id", nil, []byte("b"))
	mustLoad(t, a, "id", "a")
	mustLoad(t, b, "id", "b")
	if err := a.Consume(ctx, "n", "op"); err != nil {
		t.Fatal(err)
	}
	if err := b.Consume(ctx, "n", "op_b"); err != nil {
		t.Fatal(err)
	}
	if tables, _ := a.Tables(); tables != "tenant_a_approvals" {
		t.Fatalf("Tables() = %q", tables)
	}
	// CreateTables runs at every start: a second time is harmless.
	if err := a.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	mustLoad(t, a, "id", "a")
}

// Prune deletes what was saved or used before the time given, by the
// store's clock, and nothing newer.
func TestPrune(t *testing.T) {
	test := func(t *testing.T, open func(t *testing.T, opts ...sqlstore.Option) *sqlstore.Store) {
		ctx := context.Background()
		fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		s := open(t, sqlstore.WithClock(fake))
		mustSave(t, s, "old", nil, []byte("v1"))
		if err := s.Consume(ctx, "old-nonce", "op"); err != nil {
			t.Fatal(err)
		}
		mustSave(t, s, "renewed", nil, []byte("v1"))
		cut := fake.Now().Add(time.Hour)
		fake.Advance(2 * time.Hour)
		mustSave(t, s, "renewed", []byte("v1"), []byte("v2")) // saved again after the cut
		mustSave(t, s, "new", nil, []byte("v1"))
		if err := s.Consume(ctx, "new-nonce", "op"); err != nil {
			t.Fatal(err)
		}
		n, err := s.Prune(ctx, cut)
		if err != nil || n != 2 {
			t.Fatalf("Prune = %d, %v; want 2 (one approval, one nonce)", n, err)
		}
		if _, err := s.Load(ctx, "old"); !errors.Is(err, approval.ErrNotFound) {
			t.Fatalf("the old approval: %v, want ErrNotFound", err)
		}
		mustLoad(t, s, "renewed", "v2")
		mustLoad(t, s, "new", "v1")
		if err := s.Consume(ctx, "old-nonce", "op_2"); err != nil {
			t.Fatalf("the pruned nonce: %v", err)
		}
		if err := s.Consume(ctx, "new-nonce", "op_2"); !errors.Is(err, approval.ErrConsumed) {
			t.Fatalf("the kept nonce: %v, want ErrConsumed", err)
		}
	}
	t.Run("SQLite", func(t *testing.T) {
		test(t, func(t *testing.T, opts ...sqlstore.Option) *sqlstore.Store {
			return newSQLiteStore(t, openSQLite(t, filepath.Join(t.TempDir(), "a.db")), opts...)
		})
	})
	t.Run("Postgres", func(t *testing.T) {
		pg := postgres(t)
		test(t, func(t *testing.T, opts ...sqlstore.Option) *sqlstore.Store {
			return newPostgresStore(t, pg.open(t), append(opts, sqlstore.WithTablePrefix(freshPrefix()))...)
		})
	})
}
