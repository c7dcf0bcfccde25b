package eino_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/eino/adk"
	_ "modernc.org/sqlite"

	"github.com/toolmw/toolmw"
	tooleino "github.com/toolmw/toolmw/adapters/eino"
	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
)

// The restart test runs each phase of the approval in a process of its own
// (this test binary, run again as a child): the run until Eino pauses it,
// and the resume. The processes share only files: the SQLite database of
// the approvals (adapters/sqlstore) and Eino's checkpoints (a file-backed
// CheckPointStore). The run's context carries no run budget: the call's
// key reaches the resumed process through Eino's checkpoint alone.

const (
	envPhase = "TOOLMW_EINO_PHASE" // "run" or "resume"
	envDir   = "TOOLMW_EINO_DIR"   // the database, the checkpoints, the tool's side effects
	printed  = "EINO-CHILD "
)

// sealKey seals the approval rows; every process gets the same.
var sealKey = []byte("0123456789abcdef0123456789abcdef")

const checkpointID = "conv-restart"

func openDesk(t testing.TB, dir string) (*approval.Desk, func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "approvals.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlstore.New(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A generous store timeout: a loaded machine must not fail the SQLite
	// operations closed (which the test would read as a lost approval).
	return approval.NewDesk(approval.WithStore(st, store.WithTimeout(time.Minute)), approval.WithSealKey(sealKey)), func() { db.Close() }
}

// TestRestartChild is a phase of TestApprovalAcrossRestart in a process of
// its own; it does nothing in a normal run.
func TestRestartChild(t *testing.T) {
	phase, dir := os.Getenv(envPhase), os.Getenv(envDir)
	if phase == "" {
		t.Skip("a child process of TestApprovalAcrossRestart")
	}
	ctx := context.Background()
	desk, closeDesk := openDesk(t, dir)
	defer closeDesk()
	tb := newTravelBox(t, desk, func(ctx context.Context, in booking) (string, error) {
		f, err := os.OpenFile(filepath.Join(dir, "ran"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, "cancelled", in.Booking); err != nil {
			return "", err
		}
		return "cancelled " + in.Booking, nil
	})
	var m *scripted
	if phase == "run" {
		m = newScripted(theTurn)
	} else {
		m = newScripted(say("Done."))
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, tb.box, m), CheckPointStore: fileStore{dir}})
	var events []*adk.AgentEvent
	if phase == "run" {
		events = drainEvents(t, runner.Query(ctx, "Refund or cancel BK-1.", adk.WithCheckPointID(checkpointID)))
	} else {
		it, err := runner.Resume(ctx, checkpointID)
		if err != nil {
			t.Fatal(err)
		}
		events = drainEvents(t, it)
	}
	if err := eventErr(events); err != nil {
		t.Fatal(err)
	}
	if intr := interrupted(events); intr != nil {
		for _, a := range tooleino.Approvals(intr.InterruptContexts) {
			fmt.Printf("%sapproval %s %s\n", printed, a.ID, a.Tool)
		}
	}
	for id, msg := range toolMessages(m.last()) {
		fmt.Printf("%sresult %s %q\n", printed, id, msg.Content)
	}
	if last := events[len(events)-1]; last.Output != nil && last.Output.MessageOutput.Message != nil {
		fmt.Printf("%sanswer %q\n", printed, last.Output.MessageOutput.Message.Content)
	}
	fmt.Printf("%sran refund=%d fare=%d cancel=%d\n", printed, tb.refusals.Load(), tb.fares.Load(), tb.cancels.Load())
}

// child runs a phase in a new process and returns what it printed.
func child(t *testing.T, dir, phase string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestartChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envPhase+"="+phase, envDir+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("phase %s: %v\n%s", phase, err, out)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), printed); ok {
			lines = append(lines, rest)
		}
	}
	return lines
}

// line returns the printed line that starts with prefix, failing t when
// there is none.
func line(t *testing.T, lines []string, prefix string) string {
	t.Helper()
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return rest
		}
	}
	t.Fatalf("no line %q in %q", prefix, lines)
	return ""
}

// TestApprovalAcrossRestart: the run pauses for approval in one process,
// which exits; a reviewer approves in this one, through the same SQLite
// file; another process resumes from Eino's checkpoint and the tool runs,
// once. Resuming the same checkpoint again in a third process does not run
// it again: the approval was used (approval_replayed, a tool result for
// the model).
func TestApprovalAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	ran := func() int {
		b, err := os.ReadFile(filepath.Join(dir, "ran"))
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}

	out := child(t, dir, "run")
	id, tool, _ := strings.Cut(line(t, out, "approval "), " ")
	if tool != "cancel_booking" || ran() != 0 {
		t.Fatalf("phase run: approval %q of %q, %d executions; want cancel_booking's, none", id, tool, ran())
	}
	if got := line(t, out, "ran "); got != "refund=1 fare=2 cancel=0" {
		t.Fatalf("phase run executed %s", got)
	}

	desk, closeDesk := openDesk(t, dir)
	req, err := desk.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%s) in another process: %v", id, err)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	closeDesk()

	out = child(t, dir, "resume")
	if got := line(t, out, "ran "); got != "refund=0 fare=0 cancel=1" || ran() != 1 {
		t.Fatalf("phase resume executed %s, the side effect %d times; want only the cancellation, once\n%q", got, ran(), out)
	}
	if got := line(t, out, "answer "); got != `"Done."` {
		t.Fatalf("the resumed run answered %s", got)
	}
	wantResult := fmt.Sprintf("%q", toolmw.ForModel(toolmw.Text("cancelled BK-1"), nil))
	if got := line(t, out, "result call_cancel "); got != wantResult {
		t.Fatalf("the model read %s for the approved call, want %s", got, wantResult)
	}
	for _, id := range []string{"call_refund", "call_fare", "call_teleport"} {
		line(t, out, "result "+id+" ") // restored from the checkpoint, not run again
	}

	out = child(t, dir, "resume")
	if got := line(t, out, "ran "); got != "refund=0 fare=0 cancel=0" || ran() != 1 {
		t.Fatalf("a second resume executed %s, the side effect %d times; want nothing more", got, ran())
	}
	if got := line(t, out, "result call_cancel "); !strings.Contains(got, "approval_replayed") {
		t.Fatalf("the second resume answered the gated call %s, want approval_replayed", got)
	}
}
