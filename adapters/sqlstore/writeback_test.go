package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/middleware/approval/approvaltest"
	"github.com/toolmw/toolmw/taxonomy"
)

// An approval revoked by a Deny, its row then written back with a raw
// UPDATE by someone with write access to the database but not the Desk's
// key (a restored backup, say), is refused as replayed and never runs
// (issue 26, item 5); so is an approved row written back after its use.
// approvaltest runs the same through the Store; these go around it.

func TestSQLiteRowWrittenBackWithRawUpdate(t *testing.T) {
	db := openSQLite(t, filepath.Join(t.TempDir(), "approvals.db"))
	testRawWriteBack(t, db, newSQLiteStore(t, db), "?")
}

func TestPostgresRowWrittenBackWithRawUpdate(t *testing.T) {
	db := postgres(t).open(t)
	testRawWriteBack(t, db, newPostgresStore(t, db, sqlstore.WithTablePrefix(freshPrefix())), "$")
}

func testRawWriteBack(t *testing.T, db *sql.DB, s *sqlstore.Store, placeholder string) {
	ctx := context.Background()
	table, _ := s.Tables()
	q := "SELECT body FROM " + table + " WHERE id = ?"
	u := "UPDATE " + table + " SET body = ? WHERE id = ?"
	if placeholder == "$" {
		q = "SELECT body FROM " + table + " WHERE id = $1"
		u = "UPDATE " + table + " SET body = $1 WHERE id = $2"
	}
	var runs atomic.Int64
	rep := approvaltest.NewReplica(s, testKey, &runs)
	approve := func(callID string) (string, []byte) {
		t.Helper()
		id := taxonomy.InfoOf(rep.Call(callID)).Approval.ID
		req, err := rep.Desk.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.Desk.Approve(ctx, req, time.Hour); err != nil {
			t.Fatal(err)
		}
		var row []byte
		if err := db.QueryRowContext(ctx, q, []byte(id)).Scan(&row); err != nil {
			t.Fatal(err)
		}
		return id, row
	}
	writeBack := func(id string, row []byte) {
		t.Helper()
		if res, err := db.ExecContext(ctx, u, row, []byte(id)); err != nil {
			t.Fatal(err)
		} else if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("the raw UPDATE wrote %d rows", n)
		}
	}

	id, approved := approve("call_revoked")
	req, err := rep.Desk.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Desk.Deny(ctx, req); err != nil {
		t.Fatal(err)
	}
	writeBack(id, approved)
	if c := taxonomy.InfoOf(rep.Call("call_revoked")).Code; c != taxonomy.CodeApprovalReplayed || runs.Load() != 0 {
		t.Fatalf("the revoked approval written back: %s, %d executions; want approval_replayed, 0", c, runs.Load())
	}

	id, approved = approve("call_used")
	if err := rep.Call("call_used"); err != nil {
		t.Fatal(err)
	}
	writeBack(id, approved)
	if c := taxonomy.InfoOf(rep.Call("call_used")).Code; c != taxonomy.CodeApprovalReplayed || runs.Load() != 1 {
		t.Fatalf("the used approval written back: %s, %d executions; want approval_replayed, 1", c, runs.Load())
	}
}
