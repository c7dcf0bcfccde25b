package sqlstore_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"testing"

	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
)

func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  sqlstore.Option
	}{
		{"dialect below", sqlstore.WithDialect(-1)},
		{"dialect above", sqlstore.WithDialect(sqlstore.Postgres + 1)},
		{"prefix with a quote", sqlstore.WithTablePrefix(`a"; DROP TABLE x; --`)},
		{"prefix with a space", sqlstore.WithTablePrefix("a b")},
		{"prefix with a dot", sqlstore.WithTablePrefix("public.toolmw_")},
		{"prefix starting with a digit", sqlstore.WithTablePrefix("1_")},
		{"prefix not ASCII", sqlstore.WithTablePrefix("tablé_")},
		{"prefix too long", sqlstore.WithTablePrefix(strings.Repeat("p", sqlstore.MaxPrefixBytes+1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := sqlstore.Validate(tc.opt); err == nil {
				t.Fatal("Validate accepted it")
			}
			db := sql.OpenDB(nullConnector{})
			defer db.Close()
			if s, err := sqlstore.New(db, sqlstore.WithDialect(sqlstore.SQLite), tc.opt); err == nil || s != nil {
				t.Fatalf("New = %v, %v; want an error", s, err)
			}
		})
	}
}

func TestGoodOptions(t *testing.T) {
	for _, opt := range []sqlstore.Option{
		nil,
		sqlstore.WithDialect(sqlstore.Detect),
		sqlstore.WithDialect(sqlstore.Postgres),
		sqlstore.WithTablePrefix(""),
		sqlstore.WithTablePrefix("_"),
		sqlstore.WithTablePrefix("App_2"),
		sqlstore.WithTablePrefix(strings.Repeat("p", sqlstore.MaxPrefixBytes)),
		sqlstore.WithClock(nil),
	} {
		if err := sqlstore.Validate(opt); err != nil {
			t.Errorf("Validate: %v", err)
		}
	}
}

func TestNewNeedsADialect(t *testing.T) {
	if _, err := sqlstore.New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
	db := sql.OpenDB(nullConnector{})
	defer db.Close()
	if _, err := sqlstore.New(db); err == nil || !strings.Contains(err.Error(), "WithDialect") {
		t.Fatalf("New with an unknown driver: %v, want an error naming WithDialect", err)
	}
	for _, d := range []sqlstore.Dialect{sqlstore.SQLite, sqlstore.Postgres} {
		s, err := sqlstore.New(db, sqlstore.WithDialect(d))
		if err != nil || s.Dialect() != d {
			t.Fatalf("New with %v: %v, %v", d, s, err)
		}
	}
}

func TestDialectString(t *testing.T) {
	for d, want := range map[sqlstore.Dialect]string{
		sqlstore.Detect: "detect", sqlstore.SQLite: "sqlite", sqlstore.Postgres: "postgres", 7: "Dialect(7)",
	} {
		if got := d.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(d), got, want)
		}
	}
}

// nullConnector is a driver the store does not know; New never connects.
type nullConnector struct{}

func (nullConnector) Connect(context.Context) (driver.Conn, error) { return nil, driver.ErrBadConn }
func (nullConnector) Driver() driver.Driver                        { return nullDriver{} }

type nullDriver struct{}

func (nullDriver) Open(string) (driver.Conn, error) { return nil, driver.ErrBadConn }
