package spend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/testrig/sinkrig"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestCanaryNothingOfTheCallLeaks: secrets planted in the arguments, the
// errors and the results of costed tools, called through the default stack
// with the layer inserted and every sink on (logs at DEBUG): the refusals
// and the bad-cost reports hold nothing of them, and nothing reaches a
// span, a metric, a log line at any level, an event or the model.
func TestCanaryNothingOfTheCallLeaks(t *testing.T) {
	r := sinkrig.New(t)
	var mu sync.Mutex
	var reports []spend.BadCost
	costOf := func(res toolmw.Result) float64 { return math.NaN() } // hostile: charged the maximum
	r.Stack = insertAfterRetry(t, r.Stack, spend.New(
		spend.Fixed("pay", 0.4),
		spend.Metered("summarise", 0.4, costOf),
		spend.WithOnBadCost(func(b spend.BadCost) { mu.Lock(); reports = append(reports, b); mu.Unlock() })))
	refused := 0
	for _, secret := range canary.Values() {
		args, _ := json.Marshal(map[string]string{"card": secret})
		for name, fail := range canary.Hidden(secret) {
			pay, err := r.Stack.Wrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				return toolmw.Result{}, fail
			})
			if err != nil {
				t.Fatal(name, err)
			}
			ctx := toolmw.WithCallID(spend.ContextWithLimit(context.Background(), 1), "call_1")
			for range 4 {
				res, err := pay(ctx, args)
				if err != nil && strings.Contains(err.Error(), "spend limit") {
					refused++
				}
				r.Tell(res, err)
			}
		}
		// A result holding a secret, whose cost cannot be read: the model is
		// shown the result (scrubbing results is redact.WithResults'), the
		// report holds nothing of it.
		summarise, err := r.Stack.Wrap(toolmw.Spec{Name: "summarise"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Text("summary for " + secret), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := spend.ContextWithLimit(context.Background(), 1)
		for range 4 {
			res, err := summarise(ctx, args)
			if err != nil {
				r.Tell(res, err)
			}
		}
	}
	if refused == 0 || len(reports) == 0 {
		t.Fatalf("%d refusals, %d reports", refused, len(reports))
	}
	sinks := r.Sinks(t)
	sinks["reports"] = fmt.Sprintf("%+v", reports)
	sinkrig.NoLeak(t, sinks, append(canary.HiddenText, "summary for")...)
	if !strings.Contains(sinks["events"], "spend_limit") || !strings.Contains(sinks["spans"], "spend_limit") {
		t.Error("the refusals are not in the events and spans")
	}
}

func insertAfterRetry(t *testing.T, s middleware.Stack, mw toolmw.Middleware) middleware.Stack {
	t.Helper()
	s, err := s.InsertAfter(middleware.Retry, middleware.Layer{Name: "spend", Middleware: mw})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
