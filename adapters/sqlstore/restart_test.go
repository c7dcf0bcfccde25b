package sqlstore_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The restart tests run each call of the approval cycle in a process of
// its own (this test binary, run again as a child), and decide the
// requests through yet another *sql.DB, so the only thing the processes
// share is the database: the decision must survive.

// testKey seals the rows of the restart tests; every process gets the same.
var testKey = []byte("0123456789abcdef0123456789abcdef")

const (
	envChild  = "TOOLMW_SQLSTORE_CHILD"  // the call id the child makes its call with
	envDriver = "TOOLMW_SQLSTORE_DRIVER" // "sqlite" or "pgx"
	envDSN    = "TOOLMW_SQLSTORE_DSN"
	envPrefix = "TOOLMW_SQLSTORE_PREFIX"
	envRan    = "TOOLMW_SQLSTORE_RAN" // a file the tool appends a line to each time it runs
	outcomeAt = "OUTCOME "
)

// TestRestartChild is the child process of the restart tests: it makes one
// call of cancel_booking through the approval layer, in the run
// "run-restart", and prints its outcome. It does nothing in a normal run.
func TestRestartChild(t *testing.T) {
	callID := os.Getenv(envChild)
	if callID == "" {
		t.Skip("the child process of the restart tests")
	}
	db, err := sql.Open(os.Getenv(envDriver), os.Getenv(envDSN))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := sqlstore.New(db, sqlstore.WithTablePrefix(os.Getenv(envPrefix)))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	desk := approval.NewDesk(approval.WithStore(st, store.WithTimeout(time.Minute)), approval.WithSealKey(testKey))
	ran := os.Getenv(envRan)
	cancelBooking := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		f, err := os.OpenFile(ran, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return toolmw.Result{}, err
		}
		defer f.Close()
		_, err = fmt.Fprintf(f, "%s\n", args)
		return toolmw.Text("cancelled"), err
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."},
		cancelBooking, desk.Middleware(approval.Tools("cancel_booking")))
	ctx := budget.WithRun(context.Background(), budget.WithID("run-restart"))
	ctx = toolmw.WithCallID(ctx, callID)
	_, err = tool(ctx, json.RawMessage(`{"booking":"B-1"}`))
	info := taxonomy.InfoOf(err)
	id := ""
	if info.Approval != nil {
		id = info.Approval.ID
	}
	if err == nil {
		info.Code = "ok"
	}
	fmt.Printf("%s%s %s\n", outcomeAt, info.Code, id)
}

// restartCase is one database the restart test runs against.
type restartCase struct {
	driver string
	dsn    func() string // the DSN now (a restarted server may listen elsewhere)
	prefix string
	reopen func(t testing.TB) // what happens between the steps besides the processes ending
}

// child runs one call in a new process and returns its outcome code and
// approval id.
func (c restartCase) child(t *testing.T, ran, callID string) (code, id string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestartChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envChild+"="+callID, envDriver+"="+c.driver, envDSN+"="+c.dsn(),
		envPrefix+"="+c.prefix, envRan+"="+ran)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), outcomeAt); ok {
			code, id, _ = strings.Cut(rest, " ")
			return code, id
		}
	}
	t.Fatalf("child printed no outcome:\n%s", out)
	return "", ""
}

// decide opens a new *sql.DB, reads the request id and approves or denies
// it, and closes the database again.
func (c restartCase) decide(t *testing.T, id string, approve bool) {
	t.Helper()
	db, err := sql.Open(c.driver, c.dsn())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := sqlstore.New(db, sqlstore.WithTablePrefix(c.prefix))
	if err != nil {
		t.Fatal(err)
	}
	desk := approval.NewDesk(approval.WithStore(st, store.WithTimeout(time.Minute)), approval.WithSealKey(testKey))
	ctx := context.Background()
	req, err := desk.Get(ctx, id)
	if err != nil {
		t.Fatalf("Get(%s) in a new process: %v", id, err)
	}
	if req.Tool != "cancel_booking" || req.State != approval.StatePending || !strings.Contains(req.Summary, "B-1") {
		t.Fatalf("the request read back: %+v", req)
	}
	if approve {
		err = desk.Approve(ctx, req, time.Hour)
	} else {
		err = desk.Deny(ctx, req)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func testRestart(t *testing.T, c restartCase) {
	ran := filepath.Join(t.TempDir(), "ran")
	runs := func() int {
		b, err := os.ReadFile(ran)
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
	step := func(callID, wantCode string, wantRuns int) string {
		t.Helper()
		code, id := c.child(t, ran, callID)
		if code != wantCode || runs() != wantRuns {
			t.Fatalf("call %s: outcome %s, %d executions; want %s, %d", callID, code, runs(), wantCode, wantRuns)
		}
		return id
	}

	// Approved: asked in one process, decided in another, run in a third,
	// and never again.
	id := step("call_1", taxonomy.CodeApprovalPending, 0)
	c.reopen(t)
	c.decide(t, id, true)
	c.reopen(t)
	if again := step("call_1", "ok", 1); again != "" {
		t.Fatalf("a successful call carried approval id %q", again)
	}
	c.reopen(t)
	step("call_1", taxonomy.CodeApprovalReplayed, 1)

	// Denied: the same, and the tool never runs.
	id2 := step("call_2", taxonomy.CodeApprovalPending, 1)
	if id2 == id {
		t.Fatal("two model calls share an approval id")
	}
	c.reopen(t)
	c.decide(t, id2, false)
	c.reopen(t)
	step("call_2", taxonomy.CodeApprovalDenied, 1)
	step("call_2", taxonomy.CodeApprovalDenied, 1)
}

func TestSQLiteRestartKeepsDecision(t *testing.T) {
	path := filepath.Join(t.TempDir(), "approvals.db")
	testRestart(t, restartCase{
		driver: "sqlite", dsn: func() string { return sqliteDSN(path) }, prefix: "restart_",
		reopen: func(testing.TB) {},
	})
}

// With PostgreSQL the server itself restarts between the steps too.
func TestPostgresRestartKeepsDecision(t *testing.T) {
	s := postgres(t)
	testRestart(t, restartCase{
		driver: "pgx", dsn: s.dsn, prefix: freshPrefix(),
		reopen: s.restart,
	})
}
