package sqlstore_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The crash tests run each replica of an agent loop as a process of its
// own (this test binary, run again as a child) that makes one call of a
// non-idempotent tool, pay, through the dedupe layer with the call records
// of the database; pay appends a line to a file, its side effect. The
// parent kills a child with SIGKILL at a chosen point and resumes the run
// in another: the only thing the processes share is the database (and the
// side-effect file, which the parent counts).

const (
	envCallChild = "TOOLMW_SQLSTORE_CALL_CHILD" // the child's mode: see TestCallChild
	envLease     = "TOOLMW_SQLSTORE_LEASE"      // the layer's lease
	envIdem      = "TOOLMW_SQLSTORE_IDEMPOTENT" // "1": pay is declared idempotent
	envToolSleep = "TOOLMW_SQLSTORE_TOOL_SLEEP" // how long pay takes after its side effect
	envBarrier   = "TOOLMW_SQLSTORE_BARRIER"    // "1": wait for a line on stdin before calling
)

// The lines a child prints for its parent.
const (
	lineReady    = "READY"    // the store is open; waiting for the barrier
	lineRan      = "RAN"      // pay made its side effect, and hangs (mode hang-in-tool)
	lineReturned = "RETURNED" // the call returned, the answer not delivered (mode hang-after-call)
	// outcomeAt (restart_test.go) starts the line of the delivered answer:
	// OUTCOME <code> <content>
)

// The run and the call every crash test child makes.
const (
	crashRun  = "run-crash"
	crashCall = "call_pay_1"
	crashArgs = `{"amount":10,"to":"acct_7"}`
)

// crashTimeout bounds every wait of a parent for a child: long enough for
// a loaded machine, short of the test binary's own timeout.
const crashTimeout = 2 * time.Minute

// TestCallChild is the child process of the crash tests; it does nothing
// in a normal run. By its mode it makes the call and prints its outcome
// ("call"), or hangs inside pay after its side effect ("hang-in-tool"), or
// hangs after the call returned, before printing its outcome
// ("hang-after-call"): its parent kills it there.
func TestCallChild(t *testing.T) {
	mode := os.Getenv(envCallChild)
	if mode == "" {
		t.Skip("the child process of the crash tests")
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
	lease, err := time.ParseDuration(os.Getenv(envLease))
	if err != nil {
		t.Fatal(err)
	}
	sleep, _ := time.ParseDuration(os.Getenv(envToolSleep))
	ran := os.Getenv(envRan)
	pid := os.Getpid()
	pay := func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		f, err := os.OpenFile(ran, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return toolmw.Result{}, err
		}
		_, err = fmt.Fprintf(f, "%d %s\n", pid, args)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return toolmw.Result{}, err
		}
		if mode == "hang-in-tool" {
			fmt.Println(lineRan)
			select {} // killed here
		}
		time.Sleep(sleep)
		return toolmw.Text(fmt.Sprintf("charged by %d", pid)), nil
	}
	spec := toolmw.Spec{Name: "pay", Description: "Pays.", Idempotent: os.Getenv(envIdem) == "1"}
	tool := toolmw.MustWrap(spec, pay, dedupe.New(
		dedupe.WithStore(st.CallRecords(), store.WithTimeout(30*time.Second)),
		dedupe.WithLease(lease), dedupe.WithSealKey(testKey)))
	if os.Getenv(envBarrier) == "1" {
		fmt.Println(lineReady)
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	ctx := budget.WithRun(context.Background(), budget.WithID(crashRun))
	res, err := tool(toolmw.WithCallID(ctx, crashCall), json.RawMessage(crashArgs))
	if mode == "hang-after-call" {
		fmt.Println(lineReturned)
		select {} // killed here
	}
	code := "ok"
	if err != nil {
		info := taxonomy.InfoOf(err)
		code = string(info.Kind) + "/" + info.Code
	}
	fmt.Printf("%s%s %s\n", outcomeAt, code, res.Content)
}

// crashCase is one database the crash tests run against.
type crashCase struct {
	driver, dsn, prefix string
	ran                 string // the side-effect file
}

func sqliteCrash(t *testing.T) crashCase {
	dir := t.TempDir()
	return crashCase{driver: "sqlite", dsn: sqliteDSN(filepath.Join(dir, "calls.db")), prefix: "crash_", ran: filepath.Join(dir, "ran")}
}

func postgresCrash(t *testing.T) crashCase {
	return crashCase{driver: "pgx", dsn: postgres(t).dsn(), prefix: freshPrefix(), ran: filepath.Join(t.TempDir(), "ran")}
}

// child is a running child process and the lines it prints.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
	out   *strings.Builder // all it printed, for failures
}

// start starts a child in mode; env adds to its environment.
func (c crashCase) start(t *testing.T, mode string, lease time.Duration, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCallChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envCallChild+"="+mode, envDriver+"="+c.driver, envDSN+"="+c.dsn,
		envPrefix+"="+c.prefix, envRan+"="+c.ran, envLease+"="+lease.String())
	cmd.Env = append(cmd.Env, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, stdin: stdin, lines: make(chan string, 100), out: new(strings.Builder)}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	go func() {
		defer close(ch.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			ch.lines <- sc.Text()
		}
	}()
	return ch
}

// await returns the first line the child prints that starts with prefix,
// without the prefix, or fails the test when the child exits or
// crashTimeout passes first.
func (ch *child) await(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(crashTimeout)
	for {
		select {
		case l, ok := <-ch.lines:
			if !ok {
				ch.cmd.Wait()
				t.Fatalf("the child ended before printing %q:\n%s", prefix, ch.out)
			}
			ch.out.WriteString(l + "\n")
			if rest, found := strings.CutPrefix(l, prefix); found {
				return rest
			}
		case <-timeout:
			t.Fatalf("the child did not print %q within %v:\n%s", prefix, crashTimeout, ch.out)
		}
	}
}

// kill kills the child with SIGKILL and checks that it died of it.
func (ch *child) kill(t *testing.T) {
	t.Helper()
	if err := ch.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ch.cmd.Wait()
	ws, ok := ch.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child ended with %v, not killed:\n%s", ch.cmd.ProcessState, ch.out)
	}
}

// outcome waits for the child's answer and for it to exit: the code
// ("ok", or kind/code) and the result's content.
func (ch *child) outcome(t *testing.T) (code, content string) {
	t.Helper()
	code, content, _ = strings.Cut(ch.await(t, outcomeAt), " ")
	if err := ch.cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, ch.out)
	}
	return code, content
}

// call runs a child that makes the call, and returns its answer.
func (c crashCase) call(t *testing.T, lease time.Duration, env ...string) (code, content string) {
	t.Helper()
	return c.start(t, "call", lease, env...).outcome(t)
}

// lines returns the lines pay appended to the side-effect file: one per
// execution, each the pid of its process and the arguments.
func (c crashCase) lines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(c.ran)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// done reports whether the call's record in the database is done, read
// with raw SQL.
func (c crashCase) done(t *testing.T) bool {
	t.Helper()
	db, err := sql.Open(c.driver, c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := "SELECT count(*) FROM " + c.prefix + "call_records WHERE run_id = ? AND done = 1"
	if c.driver == "pgx" {
		q = strings.Replace(q, "?", "$1", 1)
	}
	var n int
	if err := db.QueryRowContext(context.Background(), q, []byte(crashRun)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// crashLease is the lease of the killed holder: the resumed call waits
// about that long to learn that the holder is dead.
const crashLease = time.Second

func testCrash(t *testing.T, newCase func(t *testing.T) crashCase) {
	// Killed after pay made its side effect and before Finish reached the
	// database: the record is started, and its holder dead. The resumed
	// run, in another process, waits out the lease and is told the call
	// may have run; pay does not run again.
	t.Run("KilledBeforeFinish", func(t *testing.T) {
		c := newCase(t)
		holder := c.start(t, "hang-in-tool", crashLease)
		holder.await(t, lineRan)
		holder.kill(t)
		if c.done(t) {
			t.Fatal("the record is done although its holder died in the tool")
		}
		start := time.Now()
		code, _ := c.call(t, crashLease)
		if code != string(taxonomy.KindFailed)+"/"+taxonomy.CodeDuplicateInDoubt {
			t.Fatalf("the resumed call: %s, want tool-failed/duplicate_in_doubt", code)
		}
		if n := len(c.lines(t)); n != 1 {
			t.Fatalf("pay ran %d times, want once: %q", n, c.lines(t))
		}
		t.Logf("the resumed call learnt the holder died after %v (lease %v, with the process's start)", time.Since(start), crashLease)
		// And again, later: the same answer, still without running.
		if code, _ := c.call(t, crashLease); code != string(taxonomy.KindFailed)+"/"+taxonomy.CodeDuplicateInDoubt || len(c.lines(t)) != 1 {
			t.Fatalf("a second resumed call: %s, %d executions", code, len(c.lines(t)))
		}
	})

	// Killed after Finish reached the database, before the answer was
	// delivered: the resumed run gets the recorded outcome (the content
	// names the killed process), and pay does not run again.
	t.Run("KilledAfterFinish", func(t *testing.T) {
		c := newCase(t)
		holder := c.start(t, "hang-after-call", crashLease)
		holder.await(t, lineReturned)
		if !c.done(t) {
			t.Fatal("the call returned and its record is not done")
		}
		pid := holder.cmd.Process.Pid
		holder.kill(t)
		code, content := c.call(t, crashLease)
		if want := fmt.Sprintf("charged by %d", pid); code != "ok" || content != want {
			t.Fatalf("the resumed call: %s %q, want ok %q", code, content, want)
		}
		if lines := c.lines(t); len(lines) != 1 || !strings.HasPrefix(lines[0], strconv.Itoa(pid)+" ") {
			t.Fatalf("pay's executions: %q, want one, by the killed process", lines)
		}
	})

	// Three replicas make the same call at once: pay runs once, and each
	// gets its outcome. The lease is long enough that a live holder is
	// never taken for dead on a loaded machine.
	t.Run("ThreeReplicasRace", func(t *testing.T) {
		c := newCase(t)
		const replicas = 3
		children := make([]*child, replicas)
		for i := range children {
			children[i] = c.start(t, "call", 10*time.Second, envBarrier+"=1", envToolSleep+"=300ms")
		}
		for _, ch := range children {
			ch.await(t, lineReady)
		}
		for _, ch := range children {
			if _, err := io.WriteString(ch.stdin, "go\n"); err != nil {
				t.Fatal(err)
			}
		}
		var contents []string
		for _, ch := range children {
			code, content := ch.outcome(t)
			if code != "ok" {
				t.Fatalf("a replica's call: %s %q", code, content)
			}
			contents = append(contents, content)
		}
		lines := c.lines(t)
		if len(lines) != 1 {
			t.Fatalf("pay ran %d times across %d replicas, want once: %q", len(lines), replicas, lines)
		}
		pid, _, _ := strings.Cut(lines[0], " ")
		for _, content := range contents {
			if content != "charged by "+pid {
				t.Fatalf("the replicas' answers %q; want each %q", contents, "charged by "+pid)
			}
		}
	})

	// An idempotent tool whose holder died runs again in the resumed
	// process: it takes the record over after the lease.
	t.Run("IdempotentRunsAgain", func(t *testing.T) {
		c := newCase(t)
		holder := c.start(t, "hang-in-tool", crashLease, envIdem+"=1")
		holder.await(t, lineRan)
		holder.kill(t)
		resumed := c.start(t, "call", crashLease, envIdem+"=1")
		pid := resumed.cmd.Process.Pid
		code, content := resumed.outcome(t)
		if want := fmt.Sprintf("charged by %d", pid); code != "ok" || content != want {
			t.Fatalf("the resumed idempotent call: %s %q, want ok %q", code, content, want)
		}
		if lines := c.lines(t); len(lines) != 2 || !strings.HasPrefix(lines[1], strconv.Itoa(pid)+" ") {
			t.Fatalf("pay's executions: %q, want two, the second by the resumed process", lines)
		}
		// Its outcome is recorded: a later repeat gets it.
		if code, content := c.call(t, crashLease, envIdem+"=1"); code != "ok" || content != fmt.Sprintf("charged by %d", pid) || len(c.lines(t)) != 2 {
			t.Fatalf("a repeat after the takeover: %s %q, %d executions", code, content, len(c.lines(t)))
		}
	})
}

func TestSQLiteCallRecordsSurviveCrashes(t *testing.T) { testCrash(t, sqliteCrash) }

func TestPostgresCallRecordsSurviveCrashes(t *testing.T) {
	postgres(t)
	testCrash(t, postgresCrash)
}
