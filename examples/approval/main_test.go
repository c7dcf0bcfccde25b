package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/middleware/approval"
)

// The tests run the program as a separate process: this test binary, run
// again with envRun set, is the program (TestMain calls run as main does),
// so a process can be killed while it waits for an answer and another one
// started on the same database.

const (
	envRun = "TOOLMW_EXAMPLE_APPROVAL_RUN" // the run id; set only in the child
	envDB  = "TOOLMW_EXAMPLE_APPROVAL_DB"
	prompt = "approve? [y/n] "
)

func TestMain(m *testing.M) {
	if id := os.Getenv(envRun); id != "" {
		os.Exit(run(context.Background(), os.Getenv(envDB), id, os.Stdin, os.Stdout))
	}
	goleak.VerifyTestMain(m)
}

// program is one process of the example.
type program struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	seen  strings.Builder // everything read from its output so far
}

func start(t *testing.T, db, runID string) *program {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), envRun+"="+runID, envDB+"="+db)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { pw.CloseWithError(cmd.Wait()) }()
	p := &program{t: t, cmd: cmd, stdin: stdin, out: bufio.NewReader(pr)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		io.Copy(io.Discard, pr)
	})
	return p
}

// waitFor reads the output until it ends with s and returns all of it so
// far; the process ending first fails the test.
func (p *program) waitFor(s string) string {
	p.t.Helper()
	for !strings.HasSuffix(p.seen.String(), s) {
		c, err := p.out.ReadByte()
		if err != nil {
			p.t.Fatalf("the program ended before printing %q: %v\n%s", s, err, p.seen.String())
		}
		p.seen.WriteByte(c)
	}
	return p.seen.String()
}

// finish closes the input, reads the rest of the output and returns it
// with the exit status.
func (p *program) finish() (string, int) {
	p.t.Helper()
	p.stdin.Close()
	rest, err := io.ReadAll(p.out)
	p.seen.Write(rest)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return p.seen.String(), 0
	case errors.As(err, &exit):
		return p.seen.String(), exit.ExitCode()
	}
	p.t.Fatalf("reading the program's output: %v", err)
	return "", 0
}

var approvalID = regexp.MustCompile(`\((apr_[0-9a-f]{32})\)`)

// askedID returns the approval id of the question in out.
func askedID(t *testing.T, out string) string {
	t.Helper()
	m := approvalID.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no approval id in the question:\n%s", out)
	}
	return m[1]
}

// state reads the booking's status and how often it was cancelled.
func state(t *testing.T, db string) (status string, cancellations int) {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.QueryRow(`SELECT status FROM bookings WHERE id = 'BK-1042'`).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if err := d.QueryRow(`SELECT count(*) FROM cancellations`).Scan(&cancellations); err != nil {
		t.Fatal(err)
	}
	return status, cancellations
}

// The first process asks and is stopped before the answer (killed, or its
// input ends); the second asks the same request again and takes the
// answer; a third finds the decision used and cancels nothing more.
func TestRestartBetweenQuestionAndAnswer(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stop       func(p *program) // how the first process ends before the answer
		answer     string
		wantCall   string // the outcome line of cancel_booking in the second run
		wantStatus string
		wantCount  int
		thirdCall  string // the outcome line in a third run
	}{
		{"killed then yes", kill, "y\n", "cancel_booking → ok", "cancelled", 1, "cancel_booking → tool-not-permitted/approval_replayed"},
		{"no answer then yes", noAnswer, "yes\n", "cancel_booking → ok", "cancelled", 1, "cancel_booking → tool-not-permitted/approval_replayed"},
		{"killed then no", kill, "n\n", "cancel_booking → approval-denied/approval_denied", "confirmed", 0, "cancel_booking → approval-denied/approval_denied"},
		{"a bad answer, then yes", kill, "maybe\ny\n", "cancel_booking → ok", "cancelled", 1, "cancel_booking → tool-not-permitted/approval_replayed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "approvals.db")

			first := start(t, db, "run-7")
			id := askedID(t, first.waitFor(prompt))
			tc.stop(first)
			if status, n := state(t, db); status != "confirmed" || n != 0 {
				t.Fatalf("after the question: booking %s, %d cancellations; want confirmed, 0", status, n)
			}

			second := start(t, db, "run-7")
			if again := askedID(t, second.waitFor(prompt)); again != id {
				t.Fatalf("the restarted run asks %s, the first asked %s", again, id)
			}
			if _, err := io.WriteString(second.stdin, tc.answer); err != nil {
				t.Fatal(err)
			}
			out, code := second.finish()
			if code != 0 || !strings.Contains(out, tc.wantCall+"\n") {
				t.Fatalf("the second run: exit %d, want 0 and %q:\n%s", code, tc.wantCall, out)
			}
			if status, n := state(t, db); status != tc.wantStatus || n != tc.wantCount {
				t.Fatalf("after the answer: booking %s, %d cancellations; want %s, %d", status, n, tc.wantStatus, tc.wantCount)
			}

			// The decision is not asked for or used again.
			out, code = start(t, db, "run-7").finish()
			if code != 0 || strings.Contains(out, prompt) || !strings.Contains(out, tc.thirdCall+"\n") {
				t.Fatalf("a third run: exit %d, want 0, no question and %q:\n%s", code, tc.thirdCall, out)
			}
			if status, n := state(t, db); status != tc.wantStatus || n != tc.wantCount {
				t.Fatalf("after a third run: booking %s, %d cancellations; want %s, %d", status, n, tc.wantStatus, tc.wantCount)
			}
		})
	}
}

// kill kills the process while it waits for the answer.
func kill(p *program) {
	p.t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		p.t.Fatal(err)
	}
	if _, code := p.finish(); code != -1 {
		p.t.Fatalf("the killed process exited with %d", code)
	}
}

// noAnswer ends the process's input without an answer: it exits, saying
// the request waits.
func noAnswer(p *program) {
	p.t.Helper()
	out, code := p.finish()
	if code != exitNoAnswer || !strings.Contains(out, "no answer: the request waits") {
		p.t.Fatalf("without an answer: exit %d, want %d:\n%s", code, exitNoAnswer, out)
	}
}

// Another run id is another run: its call asks anew.
func TestAnotherRunAsksAnew(t *testing.T) {
	db := filepath.Join(t.TempDir(), "approvals.db")
	a := start(t, db, "run-a")
	idA := askedID(t, a.waitFor(prompt))
	kill(a)
	b := start(t, db, "run-b")
	idB := askedID(t, b.waitFor(prompt))
	kill(b)
	if idA == idB {
		t.Fatalf("two runs share approval id %s", idA)
	}
}

// The loop in this process, with a reviewer that cannot answer, then one
// that approves: the same request, and one cancellation.
func TestLoopInProcess(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "approvals.db")
	app, err := open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	var asked []string
	if _, err := app.Loop(ctx, "run-x", reviewerFunc(func(id string) (bool, error) {
		asked = append(asked, id)
		return false, ErrNoAnswer
	}), io.Discard); !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("Loop without an answer: %v", err)
	}
	answer, err := app.Loop(ctx, "run-x", reviewerFunc(func(id string) (bool, error) {
		asked = append(asked, id)
		return true, nil
	}), io.Discard)
	if err != nil || !strings.Contains(answer, "booking BK-1042 cancelled") {
		t.Fatalf("Loop with a yes: %q, %v", answer, err)
	}
	if len(asked) != 2 || asked[0] != asked[1] {
		t.Fatalf("asked %q, want the same request twice", asked)
	}
	if status, n := state(t, db); status != "cancelled" || n != 1 {
		t.Fatalf("booking %s, %d cancellations", status, n)
	}
}

type reviewerFunc func(id string) (bool, error)

func (f reviewerFunc) Review(req approval.Request) (bool, error) { return f(req.ID) }
