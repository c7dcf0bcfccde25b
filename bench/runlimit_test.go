package bench

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/guardrail"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
)

// BenchmarkLimits measures the per-run call limit, spend and guardrail
// layers of issue 20, each alone through toolmw.Wrap on the no-op tool:
//
//   - bare: the tool without a layer, the baseline;
//   - runlimit_unlimited: a tool the layer has no limit for (a map lookup);
//   - runlimit_admitted: a limited call that is admitted (a slot taken in
//     the run, the run's counts found through its weak-keyed slot);
//   - runlimit_refused: a call past its limit (the refusal is made once);
//   - spend_fixed, spend_metered: a costed call that fits the run's limit
//     (reserve, settle; the metered one reads its cost from the result);
//   - spend_refused: a call the limit refuses;
//   - guardrail_args, guardrail_both: one argument check, and one of each,
//     that let the call through;
//   - guardrail_blocked: an argument check that blocks (the block's error
//     is made once per guardrail).
func BenchmarkLimits(b *testing.B) {
	name := spec.Name
	pass := func(context.Context, toolmw.Call, json.RawMessage) error { return nil }
	passResult := func(context.Context, toolmw.Call, toolmw.Result) error { return nil }
	errNo := errors.New("blocked")
	block := func(context.Context, toolmw.Call, json.RawMessage) error { return errNo }
	// A run that never runs out: a new one every so many calls.
	manyRuns := func(opts ...func(context.Context) context.Context) func() context.Context {
		n := 0
		var ctx context.Context
		return func() context.Context {
			if n%(runlimit.MaxCalls-1) == 0 {
				ctx = budget.WithRun(context.Background())
				for _, o := range opts {
					ctx = o(ctx)
				}
			}
			n++
			return ctx
		}
	}
	same := func(ctx context.Context) func() context.Context { return func() context.Context { return ctx } }
	usedRun := budget.WithRun(context.Background())
	limited := func(ctx context.Context) context.Context { return spend.ContextWithLimit(ctx, spend.MaxAmount) }

	cases := []struct {
		name string
		mw   toolmw.Middleware // nil: none
		ctx  func() context.Context
		fail bool
	}{
		{"bare", nil, same(context.Background()), false},
		{"runlimit_unlimited", runlimit.New(runlimit.Once("cancel_booking")), same(usedRun), false},
		{"runlimit_admitted", runlimit.New(runlimit.Max(name, runlimit.MaxCalls)), manyRuns(), false},
		{"runlimit_refused", runlimit.New(runlimit.Once(name)), same(usedRun), true},
		{"spend_fixed", spend.New(spend.Fixed(name, 0.001)), manyRuns(limited), false},
		{"spend_metered", spend.New(spend.Metered(name, 0.01, func(toolmw.Result) float64 { return 0.001 })), manyRuns(limited), false},
		{"spend_refused", spend.New(spend.Fixed(name, 0.001)), same(spend.ContextWithLimit(context.Background(), 0)), true},
		{"guardrail_args", guardrail.New(guardrail.Args("pass", pass)), same(context.Background()), false},
		{"guardrail_both", guardrail.New(guardrail.Args("pass", pass), guardrail.Result("pass_result", passResult)), same(context.Background()), false},
		{"guardrail_blocked", guardrail.New(guardrail.Args("block", block)), same(context.Background()), true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var mws []toolmw.Middleware
			if c.mw != nil {
				mws = append(mws, c.mw)
			}
			tool := toolmw.MustWrap(spec, noop, mws...)
			if c.name == "runlimit_refused" {
				_, _ = tool(usedRun, benchArgs) // the run's one call
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := tool(c.ctx(), benchArgs)
				if (err != nil) != c.fail {
					b.Fatal(err)
				}
				sink = res
			}
		})
	}
}
