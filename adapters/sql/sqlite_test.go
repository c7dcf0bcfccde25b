package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	_ "modernc.org/sqlite"

	sqlstore "github.com/toolmw/toolmw/adapters/sql"
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
	if err := a.Consume(ctx, "n"); err != nil {
		t.Fatal(err)
	}
	if err := b.Consume(ctx, "n"); err != nil {
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
