package main

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLoopPolicies(t *testing.T) {
	for _, tc := range []struct {
		policy  Policy
		answer  string
		errKind taxonomy.Kind
	}{
		{ReportToModel, "Booked the 08:10 flight.", ""},
		{FailRun, "", taxonomy.KindFailed},
	} {
		box, err := newToolbox()
		if err != nil {
			t.Fatal(err)
		}
		ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(4))
		answer, err := Loop(ctx, script(), box, tc.policy, 10)
		if answer != tc.answer {
			t.Errorf("policy %d: answer %q", tc.policy, answer)
		}
		if tc.errKind != "" && taxonomy.InfoOf(err).Kind != tc.errKind {
			t.Errorf("policy %d: err %v", tc.policy, err)
		}
		run, _ := budget.RunFrom(ctx)
		if tc.policy == ReportToModel && run.Used("search_flights") != 4 {
			t.Errorf("search_flights used %d attempts, want the cap of 4", run.Used("search_flights"))
		}
	}
}

func TestLoopCancelled(t *testing.T) {
	box, _ := newToolbox()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Loop(ctx, script(), box, ReportToModel, 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
