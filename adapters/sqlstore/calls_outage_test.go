package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The outage tests make calls through the dedupe layer while the database
// is stopped, restarted or hung: no call waits past the store timeout
// (with slack for a loaded machine), a call of a non-idempotent tool that
// cannot be recorded fails closed and does not run, and no call runs
// twice.

const (
	// outageTimeout is the layer's store timeout in these tests.
	outageTimeout = 500 * time.Millisecond
	// outageSlack is how much longer than the timeout a call may take on a
	// loaded machine: the layer's own work, a cancelled statement's return.
	outageSlack = 3 * time.Second
)

// outageRig is the dedupe layer over one store's call records, a
// non-idempotent tool (pay) and an idempotent one (read), each counting
// its executions per call id; pay can be held inside the tool.
type outageRig struct {
	pay, read toolmw.Tool

	mu      sync.Mutex
	runs    map[string]int
	hold    map[string]chan struct{} // a call of pay waits here, when set
	entered chan string              // a held call of pay entered the tool
	errs    []store.Error            // what the layer reported
}

func newOutageRig(t *testing.T, calls dedupe.Store) *outageRig {
	r := &outageRig{runs: map[string]int{}, hold: map[string]chan struct{}{}, entered: make(chan string, 10)}
	mw := dedupe.New(dedupe.WithStore(calls, store.WithTimeout(outageTimeout), store.WithOnError(func(e store.Error) {
		r.mu.Lock()
		r.errs = append(r.errs, e)
		r.mu.Unlock()
	})), dedupe.WithLease(time.Second))
	tool := func(name string) toolmw.Tool {
		return func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			c, _ := toolmw.CallFrom(ctx)
			id := name + "/" + c.ID
			r.mu.Lock()
			r.runs[id]++
			n, hold := r.runs[id], r.hold[id]
			r.mu.Unlock()
			if hold != nil {
				r.entered <- id
				<-hold
			}
			return toolmw.Text(fmt.Sprintf("%s run %d", id, n)), nil
		}
	}
	r.pay = toolmw.MustWrap(toolmw.Spec{Name: "pay", Description: "Pays."}, tool("pay"), mw)
	r.read = toolmw.MustWrap(toolmw.Spec{Name: "read", Description: "Reads.", Idempotent: true}, tool("read"), mw)
	return r
}

// ran returns how many times tool ran for the call id.
func (r *outageRig) ran(tool, id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[tool+"/"+id]
}

// noneTwice fails the test if a call of pay ran more than once.
func (r *outageRig) noneTwice(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, n := range r.runs {
		if n > 1 && id[:4] == "pay/" {
			t.Errorf("%s ran %d times", id, n)
		}
	}
}

// call makes a call of tool with the call id, in the outage tests' run,
// and returns its outcome (ok, or kind/code), its content and how long it
// took.
func call(tool toolmw.Tool, id string) (code, content string, took time.Duration) {
	ctx := budget.WithRun(context.Background(), budget.WithID("run-outage"))
	start := time.Now()
	res, err := tool(toolmw.WithCallID(ctx, id), json.RawMessage(`{"amount":10}`))
	took = time.Since(start)
	if err != nil {
		info := taxonomy.InfoOf(err)
		return string(info.Kind) + "/" + info.Code, "", took
	}
	return "ok", res.Content, took
}

var unavailable = string(taxonomy.KindFailed) + "/" + taxonomy.CodeCallRecordUnavailable

// settledCall makes the call again while the layer answers
// call_record_unavailable (the store may still be coming back, or rest
// after a failure), at most 40 times, a rest apart.
func settledCall(tool toolmw.Tool, id string) (code, content string) {
	for range 40 {
		code, content, _ = call(tool, id)
		if code != unavailable {
			return code, content
		}
		time.Sleep(store.Rest + 50*time.Millisecond)
	}
	return code, content
}

// bounded fails the test if a call took longer than the store timeout
// and the slack.
func bounded(t *testing.T, what string, took time.Duration) {
	t.Helper()
	if took > outageTimeout+outageSlack {
		t.Errorf("%s took %v, past the store timeout %v and %v of slack", what, took, outageTimeout, outageSlack)
	}
}

// outageCalls makes calls of pay and read with fresh ids while the store
// cannot answer: pay fails closed at once or within the store timeout and
// does not run; read runs, degraded.
func (r *outageRig) outageCalls(t *testing.T, prefix string) {
	t.Helper()
	var longest time.Duration
	for i := range 6 {
		id := fmt.Sprintf("%s_%d", prefix, i)
		code, _, took := call(r.pay, id)
		bounded(t, "a call of pay", took)
		longest = max(longest, took)
		if code != unavailable || r.ran("pay", id) != 0 {
			t.Fatalf("pay %s without its store: %s, %d executions; want %s, none", id, code, r.ran("pay", id), unavailable)
		}
		code, _, took = call(r.read, id)
		bounded(t, "a call of read", took)
		longest = max(longest, took)
		if code != "ok" || r.ran("read", id) != 1 {
			t.Fatalf("read %s without its store: %s, %d executions; want ok, once", id, code, r.ran("read", id))
		}
	}
	t.Logf("the longest call without the store took %v (store timeout %v)", longest, outageTimeout)
}

// PostgreSQL stopped while a call of pay is in the tool, and restarted on
// the same port: the calls made meanwhile end within the timeout, pay's
// fail closed; the call in flight returns its result, and its outcome,
// kept by the layer, reaches the database once it is back, so a repeat
// gets it; a refused call, made again, runs once.
func TestPostgresCallRecordsStopped(t *testing.T) {
	pg := postgres(t)
	db := pg.open(t)
	st := newPostgresStore(t, db, sqlstore.WithTablePrefix(freshPrefix()))
	r := newOutageRig(t, st.CallRecords())

	if code, _ := settledCall(r.pay, "call_0"); code != "ok" {
		t.Fatalf("a call with the database up: %s", code)
	}
	proceed := make(chan struct{})
	r.mu.Lock()
	r.hold["pay/call_a"] = proceed
	r.mu.Unlock()
	type answer struct{ code, content string }
	inFlight := make(chan answer, 1)
	go func() {
		code, content, _ := call(r.pay, "call_a")
		inFlight <- answer{code: code, content: content}
	}()
	<-r.entered

	pg.stop()
	r.outageCalls(t, "call_b")
	released := time.Now()
	close(proceed)
	a := <-inFlight
	bounded(t, "the call in flight, once its tool returned", time.Since(released))
	if a.code != "ok" || a.content != "pay/call_a run 1" {
		t.Fatalf("the call in flight: %s %q", a.code, a.content)
	}

	pg.restartInPlace(t)
	// The outcome of call_a was kept by the layer and reaches the
	// database: wait for it, then a repeat gets it.
	waitDone(t, db, st, "run-outage")
	if code, content := settledCall(r.pay, "call_a"); code != "ok" || content != a.content || r.ran("pay", "call_a") != 1 {
		t.Fatalf("a repeat of the call in flight: %s %q, %d executions; want its outcome, once", code, content, r.ran("pay", "call_a"))
	}
	// A call refused for want of the store never ran: made again, it runs
	// once, and its repeat gets its outcome.
	for range 2 {
		if code, content := settledCall(r.pay, "call_b_0"); code != "ok" || content != "pay/call_b_0 run 1" {
			t.Fatalf("a refused call made again: %s %q", code, content)
		}
	}
	r.noneTwice(t)
	if len(r.errs) == 0 {
		t.Error("the layer reported no store failure")
	}
}

// waitDone waits until the run's record of call_a is done in the
// database: the layer's write-behind of Finish landed.
func waitDone(t *testing.T, db *sql.DB, st *sqlstore.Store, run string) {
	t.Helper()
	approvals, _ := st.Tables()
	table := approvals[:len(approvals)-len("approvals")] + "call_records"
	q := "SELECT count(*) FROM " + table + " WHERE run_id = $1 AND done = 1"
	if st.Dialect() == sqlstore.SQLite {
		q = "SELECT count(*) FROM " + table + " WHERE run_id = ? AND done = 1"
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var n int
		err := db.QueryRowContext(context.Background(), q, []byte(run)).Scan(&n)
		// call_0 is done; call_a when its Finish landed.
		if err == nil && n >= 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the outcome of the call in flight did not reach the database within a minute: %d done, %v", n, err)
		}
		time.Sleep(100 * time.Millisecond) // waiting for the layer's write-behind: nothing to synchronise on
	}
}

// The call records table locked by another session (LOCK TABLE … ACCESS
// EXCLUSIVE in an open transaction): the database is up but does not
// answer. Calls end within the store timeout, pay's fail closed; once the
// lock is gone, a refused call runs at most once.
func TestPostgresCallRecordsHung(t *testing.T) {
	pg := postgres(t)
	db := pg.open(t)
	prefix := freshPrefix()
	st := newPostgresStore(t, db, sqlstore.WithTablePrefix(prefix))
	r := newOutageRig(t, st.CallRecords())
	if code, _ := settledCall(r.pay, "call_0"); code != "ok" {
		t.Fatalf("a call with the database up: %s", code)
	}
	tx, err := pg.open(t).BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("LOCK TABLE " + prefix + "call_records IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	r.outageCalls(t, "call_h")
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	testAfterHang(t, r, "call_h_0")
}

// testAfterHang makes a call refused while the store hung again, once it
// answers: a claim cancelled at the timeout may still have landed, and
// its release come first, so the call may be told it may have run
// (duplicate_in_doubt, on the safe side); else it runs, once.
func testAfterHang(t *testing.T, r *outageRig, id string) {
	t.Helper()
	for range 2 {
		code, content := settledCall(r.pay, id)
		switch {
		case code == "ok" && content == "pay/"+id+" run 1":
		case code == string(taxonomy.KindFailed)+"/"+taxonomy.CodeDuplicateInDoubt && r.ran("pay", id) == 0:
			t.Logf("the refused call is in doubt: its cancelled claim landed after its release")
		default:
			t.Fatalf("a call refused while the store hung, made again: %s %q, %d executions", code, content, r.ran("pay", id))
		}
	}
	r.noneTwice(t)
}

// SQLite's file locked by another connection's exclusive transaction: a
// writer waits for the lock up to its busy timeout (5 s here), longer
// than the store timeout. The calls still end within the store timeout:
// the driver interrupts a statement whose context ends.
func TestSQLiteCallRecordsLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.db")
	st := newSQLiteStore(t, openSQLite(t, path))
	r := newOutageRig(t, st.CallRecords())
	if code, _ := settledCall(r.pay, "call_0"); code != "ok" {
		t.Fatalf("a call with the database free: %s", code)
	}
	ctx := context.Background()
	conn, err := openSQLite(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	r.outageCalls(t, "call_l")
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	testAfterHang(t, r, "call_l_0")
}

// Two done records' outcomes swapped in the database (raw SQL, by someone
// without the layer's seal key): the repeats fail closed as
// call_record_corrupt, and the tool does not run again.
func TestSQLiteCallRecordRewritten(t *testing.T) {
	db := openSQLite(t, filepath.Join(t.TempDir(), "calls.db"))
	testRewritten(t, db, newSQLiteStore(t, db), "toolmw_call_records", false)
}

func TestPostgresCallRecordRewritten(t *testing.T) {
	db := postgres(t).open(t)
	prefix := freshPrefix()
	testRewritten(t, db, newPostgresStore(t, db, sqlstore.WithTablePrefix(prefix)), prefix+"call_records", true)
}

func testRewritten(t *testing.T, db *sql.DB, st *sqlstore.Store, table string, pg bool) {
	ctx := context.Background()
	runs := 0
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay", Description: "Pays."},
		func(context.Context, json.RawMessage) (toolmw.Result, error) {
			runs++
			return toolmw.Text(fmt.Sprintf("charge #%d", runs)), nil
		},
		dedupe.New(dedupe.WithStore(st.CallRecords(), store.WithTimeout(time.Minute)), dedupe.WithSealKey(testKey)))
	for _, id := range []string{"call_1", "call_2"} {
		if code, _, _ := call(tool, id); code != "ok" {
			t.Fatalf("%s: %s", id, code)
		}
	}
	rows, err := db.QueryContext(ctx, "SELECT call_key, outcome FROM "+table+" WHERE done = 1")
	if err != nil {
		t.Fatal(err)
	}
	var keys, outcomes [][]byte
	for rows.Next() {
		var k, o []byte
		if err := rows.Scan(&k, &o); err != nil {
			t.Fatal(err)
		}
		keys, outcomes = append(keys, k), append(outcomes, o)
	}
	if err := rows.Err(); err != nil || len(keys) != 2 {
		t.Fatalf("%d done records, %v", len(keys), err)
	}
	rows.Close()
	q := "UPDATE " + table + " SET outcome = ? WHERE call_key = ?"
	if pg {
		q = "UPDATE " + table + " SET outcome = $1 WHERE call_key = $2"
	}
	for i := range keys {
		if _, err := db.ExecContext(ctx, q, outcomes[1-i], keys[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"call_1", "call_2"} {
		code, content, _ := call(tool, id)
		if code != string(taxonomy.KindFailed)+"/"+taxonomy.CodeCallRecordCorrupt || runs != 2 {
			t.Fatalf("the repeat of %s, its outcome swapped: %s %q, %d executions; want call_record_corrupt, 2", id, code, content, runs)
		}
	}
}
