package runlimit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/sinkrig"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestCanaryRefusalsHoldNothing: secrets planted in the arguments and in
// the errors of a once-per-run tool, called through the default stack with
// the layer inserted and every sink on (logs at DEBUG): the refusals that
// follow hold nothing of them, and nothing reaches a span, a metric, a log
// line at any level, an event or the model.
func TestCanaryRefusalsHoldNothing(t *testing.T) {
	r := sinkrig.New(t)
	r.Insert(t, middleware.Retry, "runlimit", runlimit.New(runlimit.Once("cancel_booking")))
	calls, refused := 0, 0
	for _, secret := range canary.Values() {
		for name, fail := range canary.Hidden(secret) {
			tool, err := r.Stack.Wrap(toolmw.Spec{Name: "cancel_booking"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				return toolmw.Result{}, fail
			})
			if err != nil {
				t.Fatal(name, err)
			}
			args, _ := json.Marshal(map[string]string{"booking": secret})
			run := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
			for range 3 {
				res, err := tool(run, args)
				if err == nil {
					t.Fatalf("%s: no error", name)
				}
				if strings.Contains(err.Error(), "once in one run") {
					refused++
				}
				r.Tell(res, err)
				calls++
			}
		}
	}
	if refused == 0 {
		t.Fatal("no call was refused")
	}
	sinks := r.Sinks(t)
	sinkrig.NoLeak(t, sinks, canary.HiddenText...)
	if !strings.Contains(sinks["spans"], "run_call_limit") || !strings.Contains(sinks["events"], "run_call_limit") {
		t.Error("the refusals are not in the spans and events")
	}
	t.Logf("%d calls, %d refused", calls, refused)
}
