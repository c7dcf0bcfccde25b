package genkit_test

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

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	_ "modernc.org/sqlite"

	"github.com/toolmw/toolmw"
	toolgenkit "github.com/toolmw/toolmw/adapters/genkit"
	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/toolmwtest"
)

// The restart test runs each phase of an approval in a process of its own
// (this test binary, run again as a child): the generation pauses in one,
// a reviewer decides in the parent through another connection to the
// SQLite file, and the generation resumes from the saved history in a
// third. The processes share only the directory: the SQLite approval
// store and the history file.

// sealKey seals the approval rows; every process gets the same.
var sealKey = []byte("genkit-restart-seal-key-32-bytes")

const (
	envPhase = "TOOLMW_GENKIT_PHASE" // "pause" or "resume"
	envDir   = "TOOLMW_GENKIT_DIR"   // the shared directory
	printed  = "CHILD "              // the prefix of what a child reports
)

// openDesk opens the approval desk on the SQLite file in dir.
func openDesk(t *testing.T, dir string) *approval.Desk {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "approvals.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := sqlstore.New(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTables(context.Background()); err != nil {
		t.Fatal(err)
	}
	return approval.NewDesk(approval.WithStore(st, store.WithTimeout(time.Minute)), approval.WithSealKey(sealKey))
}

// TestRestartChild is a child process of TestApprovalAcrossRestart: one
// phase of the generation, the app's code as it would run after a
// restart. It does nothing in a normal run.
func TestRestartChild(t *testing.T) {
	phase, dir := os.Getenv(envPhase), os.Getenv(envDir)
	if phase == "" {
		t.Skip("a child process of TestApprovalAcrossRestart")
	}
	desk := openDesk(t, dir)
	box := newBox(t, middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("refund"))})
	register(t, box, toolmw.Spec{Name: "refund", Description: "Refunds a booking."}, func(ctx context.Context, in bookingIn) (string, error) {
		f, err := os.OpenFile(filepath.Join(dir, "ran"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := fmt.Fprintln(f, in.Booking); err != nil {
			return "", err
		}
		return "refunded " + in.Booking, nil
	})
	tools, err := toolgenkit.New(box)
	if err != nil {
		t.Fatal(err)
	}
	g := newGenkit(t)
	ctx := budget.WithRun(context.Background(), budget.WithID("run_restart_7"))
	historyFile := filepath.Join(dir, "history.json")

	switch phase {
	case "pause":
		// No ref, as Gemini often sends: Genkit makes one (a UUID), the
		// saved history keeps it, and the resumed call is the same call.
		_, m := script(t, g, calls(call("refund", "", map[string]any{"booking": "BK-7"})))
		resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithPrompt("Refund BK-7."), ai.WithUse(tools))
		if err != nil {
			t.Fatal(err)
		}
		if resp.FinishReason != ai.FinishReasonInterrupted {
			t.Fatalf("finish %q, want interrupted", resp.FinishReason)
		}
		b, err := json.Marshal(resp.History())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(historyFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, p := range resp.Interrupts() {
			if id, ok := toolgenkit.Pending(p); ok {
				fmt.Println(printed + "approval " + id)
			}
		}
	case "resume":
		b, err := os.ReadFile(historyFile)
		if err != nil {
			t.Fatal(err)
		}
		var history []*ai.Message
		if err := json.Unmarshal(b, &history); err != nil {
			t.Fatal(err)
		}
		model, m := script(t, g, answer("Refunded BK-7."))
		resp, err := genkit.Generate(ctx, g, ai.WithModel(m), ai.WithMessages(history...),
			ai.WithToolRestarts(toolgenkit.Restarts(history)...), ai.WithUse(tools))
		if err != nil {
			t.Fatal(err)
		}
		got := answers(t, model.seen()[0])
		if len(got) != 1 {
			t.Fatalf("%d tool responses, want 1", len(got))
		}
		var src, content string
		for _, r := range got {
			src, content = toolmwtest.Envelope(t, outputText(t, r))
		}
		fmt.Println(printed + "saw " + src + " " + content)
		fmt.Println(printed + "answer " + resp.Text())
	}
}

// TestApprovalAcrossRestart: the generation pauses at a gated call in one
// process, saving its history; the reviewer approves in another, on the
// same SQLite store; a third process resumes the generation from the
// saved history with Genkit's restart, and the tool runs, once. Resuming
// the same history again (a replayed resume) does not run it again.
func TestApprovalAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	child := func(phase string) map[string]string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestRestartChild$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envPhase+"="+phase, envDir+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the %s process: %v\n%s", phase, err, out)
		}
		got := map[string]string{}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), printed); ok {
				key, value, _ := strings.Cut(rest, " ")
				got[key] = value
			}
		}
		return got
	}
	runs := func() int {
		b, err := os.ReadFile(filepath.Join(dir, "ran"))
		if errors.Is(err, os.ErrNotExist) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}

	id := child("pause")["approval"]
	if id == "" || runs() != 0 {
		t.Fatalf("the first process paused with approval %q after %d refunds, want an id and none", id, runs())
	}

	desk := openDesk(t, dir)
	req, err := desk.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if req.Tool != "refund" || !strings.Contains(req.Summary, "BK-7") {
		t.Fatalf("the request the reviewer reads: %+v", req)
	}
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}

	got := child("resume")
	if got["saw"] != "tool_result refunded BK-7" || got["answer"] != "Refunded BK-7." || runs() != 1 {
		t.Fatalf("the resumed process: model saw %q, answered %q, %d refunds; want the result, the answer, 1", got["saw"], got["answer"], runs())
	}

	// The same resume again: the approval is used, the tool does not run.
	got = child("resume")
	if !strings.HasPrefix(got["saw"], "tool_error tool-not-permitted approval_replayed") || runs() != 1 {
		t.Fatalf("a replayed resume: model saw %q after %d refunds, want approval_replayed and 1", got["saw"], runs())
	}
}
