package retry_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/testutil"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

var errStoreDown = errors.New("dial tcp 10.0.0.7:6379: connection refused")

// downTokens and downRuns are budget stores that always fail; healthy ones
// answer from memory.
type (
	tokens struct{ down bool }
	runs   struct{ down bool }
)

func (s tokens) Apply(_ context.Context, op budget.TokenOp) (budget.TokenBalance, error) {
	if s.down {
		return budget.TokenBalance{}, errStoreDown
	}
	return budget.TokenBalance{Balance: op.Capacity - op.Withdraw, Withdrawn: true}, nil
}

func (s runs) Take(_ context.Context, _, _ string, _ int) (int, bool, error) {
	if s.down {
		return 0, false, errStoreDown
	}
	return 1, true, nil
}

// A retry decided on the local balance or count because the budget's
// shared store failed is marked in the call record, as the breaker and
// rate limit mark theirs, so tracing and logging show it; a retry the
// store decided is not.
func TestBudgetStoreFallbackMarksTheCall(t *testing.T) {
	for _, tc := range []struct {
		name        string
		tokens, run bool // the store is down
		want        string
	}{
		{"stores healthy", false, false, ""},
		{"token store down", true, false, "retry_budget"},
		{"run store down", false, true, "run_budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen, degraded := testutil.Degraded()
			s := &script{errs: []error{taxonomy.Transient("upstream_unavailable", "down")}}
			tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, s.tool, seen,
				retry.New(retry.WithClock(newInstant()),
					retry.WithBudget(budget.NewRetry(budget.WithTokenStore(tokens{tc.tokens})))))
			ctx := budget.WithRun(context.Background(), budget.WithID("run-1"), budget.WithRunStore(runs{tc.run}))
			if _, err := tool(ctx, nil); err != nil {
				t.Fatalf("err = %v, want the retry's success", err)
			}
			if s.calls() != 2 {
				t.Fatalf("%d attempts, want 2", s.calls())
			}
			if got := degraded(); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("Call.Degraded = %q, want %q", got, tc.want)
			}
		})
	}
}
