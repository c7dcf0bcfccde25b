package langchaingo_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/agents"
	"github.com/tmc/langchaingo/chains"
	"github.com/tmc/langchaingo/llms"

	toollangchaingo "github.com/toolmw/toolmw/adapters/langchaingo"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
)

const envIDsChild = "TOOLMW_LANGCHAINGO_IDS_CHILD"

// firstPass runs the acceptance scenario's first pass in run "run_proc"
// and returns the call ids the echo box saw and the approval id the run
// stopped for.
func firstPass(t *testing.T) (ids []string, approvalID string) {
	t.Helper()
	tr := newTravel(t)
	x := newIDs(t)
	lc, err := toollangchaingo.New(tr.box)
	must(t, err)
	echo, err := toollangchaingo.New(x.box)
	must(t, err)
	model := newScripted(
		reply{calls: []llms.ToolCall{
			call("c1", "echo", `{"__arg1":"{\"b\":2,\"a\":1}"}`),
			call("c2", "echo", `{"__arg1":"{\"b\":2,\"a\":1}"}`),
		}},
		reply{calls: []llms.ToolCall{call("c3", "cancel_booking", `{"__arg1":"{\"booking\":\"BK-1042\"}"}`)}})
	ctx := budget.WithRun(context.Background(), budget.WithID("run_proc"))
	_, err = chains.Run(ctx, agents.NewExecutor(toollangchaingo.Agent(agents.NewOpenAIFunctionsAgent(model, append(lc.Tools(), echo.Tools()...)))), "go")
	var stop *toollangchaingo.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending {
		t.Fatalf("the pass ended with %v", err)
	}
	return x.take(), stop.Approvals[0]
}

// TestIDsChild is the child process of TestIDsAcrossProcesses: it prints
// what firstPass returns. It does nothing in a normal run.
func TestIDsChild(t *testing.T) {
	if os.Getenv(envIDsChild) == "" {
		t.Skip("the child process of TestIDsAcrossProcesses")
	}
	ids, approvalID := firstPass(t)
	fmt.Printf("IDS %s %s\n", strings.Join(ids, ","), approvalID)
}

// TestIDsAcrossProcesses: the call ids derived for a run, and so the
// approval ids, are the same in another process (this test binary run
// again): nothing in them is random to the process, which is what lets an
// app restarted between the question and the approval find its request
// (given an approval store both processes share, such as
// adapters/sqlstore).
func TestIDsAcrossProcesses(t *testing.T) {
	ids, approvalID := firstPass(t)
	want := "IDS " + strings.Join(ids, ",") + " " + approvalID
	cmd := exec.Command(os.Args[0], "-test.run=^TestIDsChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), envIDsChild+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "IDS ") {
			if sc.Text() != want {
				t.Fatalf("the child derived %q, this process %q", sc.Text(), want)
			}
			if len(ids) != 2 || ids[0] == ids[1] {
				t.Fatalf("ids %v", ids)
			}
			return
		}
	}
	t.Fatalf("the child printed no ids:\n%s", out)
}
