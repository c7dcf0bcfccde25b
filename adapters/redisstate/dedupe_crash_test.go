package redisstate_test

// Crash tests of the call records: separate processes (this test binary,
// run again as TestCallRecordsProcess) share a redis-server through the
// dedupe layer, and one is killed (SIGKILL) after its tool ran and before
// its caller got the answer; the run resumes in another process.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The environment of a process of the crash tests.
const (
	dedupeAddr  = "TOOLMW_TEST_DEDUPE_ADDR"  // the redis-server
	dedupeMode  = "TOOLMW_TEST_DEDUPE_MODE"  // what the process does (a crashMode)
	dedupeFile  = "TOOLMW_TEST_DEDUPE_FILE"  // the tool's side effect: one line appended per run
	dedupeStart = "TOOLMW_TEST_DEDUPE_START" // unix nanoseconds: when to call, so racers overlap
	dedupeTool  = "TOOLMW_TEST_DEDUPE_TOOL"  // "pay" (not idempotent) or "lookup" (idempotent)
)

// The modes of a process.
const (
	killInTool     = "kill-in-tool"    // killed inside the tool, after its side effect: no Finish
	killAfterCall  = "kill-after-call" // killed once the record is done on Redis, before it reports
	reportTheCall  = "report"          // calls and reports what it got
	crashRun       = "run-crash"       // the run id every process uses
	crashCallID    = "call_7Hq2"       // and the call id
	crashLease     = 300 * time.Millisecond
	crashDelay     = 200 * time.Millisecond // how long the tool runs, so that racers overlap it
	crashReportTag = "DEDUPE "
)

// crashReport is what a process that ran to the end prints.
type crashReport struct {
	Content string // the result's content
	Kind    string // the error's kind and code, or ""
	Code    string
	Took    time.Duration
}

// TestCallRecordsProcess is one process of the crash tests; it does
// nothing unless one of them started it.
func TestCallRecordsProcess(t *testing.T) {
	addr := os.Getenv(dedupeAddr)
	if addr == "" {
		t.Skip("a process of the call-record crash tests")
	}
	mode, file := os.Getenv(dedupeMode), os.Getenv(dedupeFile)
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer c.Close()
	st, err := redisstate.New(c)
	if err != nil {
		t.Fatal(err)
	}
	name := os.Getenv(dedupeTool)
	spec := toolmw.Spec{Name: name, Idempotent: name == "lookup"}
	fn := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		line := fmt.Sprintf("%s by %d\n", name, os.Getpid())
		if err := appendLine(file, line); err != nil {
			return toolmw.Result{}, err
		}
		if mode == killInTool {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		time.Sleep(crashDelay)
		return toolmw.Text(line), nil
	}
	tool, err := toolmw.Wrap(spec, fn, dedupe.New(
		dedupe.WithStore(st.CallRecords(), store.WithTimeout(calm)),
		dedupe.WithLease(crashLease)))
	if err != nil {
		t.Fatal(err)
	}
	if s := os.Getenv(dedupeStart); s != "" {
		start, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(time.Unix(0, start)))
	}
	ctx := toolmw.WithCallID(budget.WithRun(context.Background(), budget.WithID(crashRun)), crashCallID)
	began := time.Now()
	res, err := tool(ctx, nil)
	rep := crashReport{Content: res.Content, Took: time.Since(began)}
	if err != nil {
		info := taxonomy.InfoOf(err)
		rep.Kind, rep.Code = string(info.Kind), info.Code
	}
	if mode == killAfterCall {
		// The answer is in hand but not delivered: die once the record is
		// done on Redis, as a process killed between the layer's Finish
		// and its caller's reply.
		waitDone(t, c)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	out, _ := json.Marshal(rep)
	fmt.Printf("%s%s\n", crashReportTag, out)
}

// appendLine appends line to the file at path and syncs it.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// waitDone waits until the one call record on Redis is done.
func waitDone(t *testing.T, c *redis.Client) {
	ctx := context.Background()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		keys := c.Keys(ctx, "toolmw:dd:*").Val()
		if len(keys) == 1 && c.HGet(ctx, keys[0], "s").Val() == "d" {
			return
		}
	}
	t.Fatal("the call record was not done on Redis within 10 s")
}

// crashProcess is a process of a crash test.
type crashProcess struct {
	srv  *redisServer
	file string
	tool string
}

// run runs a process in mode, starting its call at start (if not zero),
// and returns its report, or nil when it was killed by SIGKILL; it fails
// the test when it ended otherwise.
func (p crashProcess) run(t *testing.T, mode string, start time.Time) *crashReport {
	t.Helper()
	rep, err := p.exec(mode, start)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// exec is run, returning what fails the test as an error: it may run on
// a goroutine of its own.
func (p crashProcess) exec(mode string, start time.Time) (*crashReport, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCallRecordsProcess$", "-test.count=1")
	env := []string{dedupeAddr + "=" + p.srv.Addr(), dedupeMode + "=" + mode, dedupeFile + "=" + p.file, dedupeTool + "=" + p.tool}
	if !start.IsZero() {
		env = append(env, dedupeStart+"="+strconv.FormatInt(start.UnixNano(), 10))
	}
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if mode == killInTool || mode == killAfterCall {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			return nil, fmt.Errorf("process %s: %v, want killed by SIGKILL\n%s%s", mode, err, stdout.Bytes(), stderr.Bytes())
		}
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("process %s: %v\n%s%s", mode, err, stdout.Bytes(), stderr.Bytes())
	}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if r, ok := bytes.CutPrefix(sc.Bytes(), []byte(crashReportTag)); ok {
			var rep crashReport
			if err := json.Unmarshal(r, &rep); err != nil {
				return nil, err
			}
			return &rep, nil
		}
	}
	return nil, fmt.Errorf("process %s printed no report\n%s%s", mode, stdout.Bytes(), stderr.Bytes())
}

// lines returns the lines of the side-effect file.
func (p crashProcess) lines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(p.file)
	if err != nil {
		t.Fatal(err)
	}
	return lineSplit(b)
}

func lineSplit(b []byte) []string {
	var out []string
	for l := range bytes.SplitSeq(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		out = append(out, string(l))
	}
	return out
}

func newCrash(t *testing.T, tool string) crashProcess {
	if os.Getenv(dedupeAddr) != "" {
		t.Skip("in a process of the crash tests")
	}
	noLeaks(t)
	return crashProcess{srv: startRedis(t), file: filepath.Join(t.TempDir(), "effects"), tool: tool}
}

// TestCallRecordsKilledBeforeFinish: a process whose non-idempotent tool
// acted (a line in the file) is killed before the layer's Finish reached
// Redis: the record stays started, with a lease nobody renews. The run
// resumes in another process: its repeat waits for the lease to end and
// gets tool-failed/duplicate_in_doubt, and the tool does not run again.
func TestCallRecordsKilledBeforeFinish(t *testing.T) {
	p := newCrash(t, "pay")
	p.run(t, killInTool, time.Time{})
	if l := p.lines(t); len(l) != 1 {
		t.Fatalf("the killed process left %d lines, want 1: %q", len(l), l)
	}
	c := p.srv.Client()
	keys := c.Keys(context.Background(), "toolmw:dd:*").Val()
	if len(keys) != 1 || c.HGet(context.Background(), keys[0], "s").Val() != "s" {
		t.Fatalf("after the kill, records %q: want one, started", keys)
	}
	rep := p.run(t, reportTheCall, time.Time{})
	if rep.Kind != string(taxonomy.KindFailed) || rep.Code != taxonomy.CodeDuplicateInDoubt {
		t.Fatalf("the resumed call got %+v, want tool-failed/duplicate_in_doubt", rep)
	}
	if l := p.lines(t); len(l) != 1 {
		t.Fatalf("the tool acted %d times, want once: %q", len(l), l)
	}
	// It waited for the lease, not past it by much.
	if rep.Took > crashLease+loadSlack {
		t.Errorf("the resumed call took %v, want at most the lease %v (+ %v for a loaded machine)", rep.Took, crashLease, loadSlack)
	}
	t.Logf("the resumed call learnt the outcome is unknown after %v", rep.Took)
}

// TestCallRecordsKilledAfterFinish: a process is killed after the layer
// finished the record on Redis and before its caller got the answer. The
// run resumes in another process: its repeat gets the recorded result, and
// the tool does not run again.
func TestCallRecordsKilledAfterFinish(t *testing.T) {
	p := newCrash(t, "pay")
	p.run(t, killAfterCall, time.Time{})
	l := p.lines(t)
	if len(l) != 1 {
		t.Fatalf("the killed process left %d lines, want 1: %q", len(l), l)
	}
	rep := p.run(t, reportTheCall, time.Time{})
	if rep.Code != "" || rep.Content != l[0]+"\n" {
		t.Fatalf("the resumed call got %+v, want the recorded result %q", rep, l[0])
	}
	if l := p.lines(t); len(l) != 1 {
		t.Fatalf("the tool acted %d times, want once: %q", len(l), l)
	}
}

// TestCallRecordsProcessesRace: three processes make the same call of a
// run (one run id, one call id) at the same moment: the tool acts once,
// and every process gets its result.
func TestCallRecordsProcessesRace(t *testing.T) {
	p := newCrash(t, "pay")
	start := time.Now().Add(time.Second) // every process started and connected
	reports := make([]*crashReport, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range reports {
		wg.Go(func() { reports[i], errs[i] = p.exec(reportTheCall, start) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	l := p.lines(t)
	if len(l) != 1 {
		t.Fatalf("three racing processes made the tool act %d times, want once: %q", len(l), l)
	}
	for i, rep := range reports {
		if rep == nil || rep.Code != "" || rep.Content != l[0]+"\n" {
			t.Errorf("process %d got %+v, want the one result %q", i, rep, l[0])
		}
	}
}

// TestCallRecordsIdempotentRunsAgain: an idempotent tool whose holder was
// killed inside it is run again by the resumed process, once the lease
// ended, and its result recorded.
func TestCallRecordsIdempotentRunsAgain(t *testing.T) {
	p := newCrash(t, "lookup")
	p.run(t, killInTool, time.Time{})
	rep := p.run(t, reportTheCall, time.Time{})
	l := p.lines(t)
	if len(l) != 2 {
		t.Fatalf("the idempotent tool ran %d times, want twice (killed, then resumed): %q", len(l), l)
	}
	if rep.Code != "" || rep.Content != l[1]+"\n" {
		t.Fatalf("the resumed call got %+v, want its own result %q", rep, l[1])
	}
	// Recorded: a third process gets it without running the tool.
	if rep := p.run(t, reportTheCall, time.Time{}); rep.Content != l[1]+"\n" {
		t.Fatalf("a repeat got %+v, want the recorded result", rep)
	}
	if n := len(p.lines(t)); n != 2 {
		t.Fatalf("the repeat ran the tool again (%d runs)", n)
	}
}
