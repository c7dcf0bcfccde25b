package toolmwtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/events"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

var errDown = taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")

func TestScript(t *testing.T) {
	s := toolmwtest.FailTimes(2, errDown, toolmw.Text("found"))
	tool := s.Tool()
	for i, want := range []string{"upstream_unavailable", "upstream_unavailable", "", ""} {
		res, err := tool(context.Background(), json.RawMessage(`{"i":`+string(rune('0'+i))+`}`))
		if got := taxonomy.InfoOf(err).Code; err != nil && got != want || err == nil && want != "" {
			t.Fatalf("call %d: %v, want %q", i+1, err, want)
		}
		if err == nil && res.Content != "found" {
			t.Fatalf("call %d: %q", i+1, res.Content)
		}
	}
	if s.Calls() != 4 || string(s.Args()[3]) != `{"i":3}` {
		t.Errorf("calls %d, args %s", s.Calls(), s.Args())
	}
}

func TestScriptHangsAndDelays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := toolmwtest.NewScript(toolmwtest.Hang()).Tool()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		if _, err := hang(ctx, nil); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Minute {
			t.Fatalf("hang: %v after %v, want the deadline after 1m", err, time.Since(start))
		}
		slow := toolmwtest.NewScript(toolmwtest.Step{Delay: 3 * time.Second, Result: toolmw.Text("late")}).Tool()
		start = time.Now()
		if res, err := slow(context.Background(), nil); err != nil || res.Content != "late" || time.Since(start) != 3*time.Second {
			t.Fatalf("delay: %v %q after %v", err, res.Content, time.Since(start))
		}
	})
}

// TestRecorder: a retry layer between the recorder's two middlewares, on
// the bubble's fake time: the attempts, the waits between them, the call's
// outcome and what the model was told, and the run event.
func TestRecorder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := toolmwtest.NewRecorder(nil)
		script := toolmwtest.FailTimes(5, errDown, toolmw.Text("ok"))
		emitter := events.NewEmitter(rec)
		tool := toolmw.MustWrap(toolmw.Spec{Name: "search", Idempotent: true}, script.Tool(),
			rec.Calls(), emitter.Middleware(),
			retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(time.Second, 4*time.Second), retry.WithRand(func() float64 { return 0.5 }), retry.WithoutBudget()),
			rec.Attempts())
		_, err := tool(context.Background(), json.RawMessage(`{"q":"x"}`))
		if taxonomy.InfoOf(err).Code != taxonomy.CodeUpstreamUnavailable {
			t.Fatalf("err = %v", err)
		}
		if err := emitter.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		attempts := rec.AttemptRecords()
		if len(attempts) != 3 || attempts[2].Attempt != 3 || string(attempts[0].Args) != `{"q":"x"}` || attempts[1].Code != taxonomy.CodeUpstreamUnavailable {
			t.Fatalf("attempts: %+v", attempts)
		}
		waits := rec.Waits("search")
		if len(waits) != 2 || waits[0] != 500*time.Millisecond || waits[1] != time.Second {
			t.Errorf("waits %v, want [500ms 1s] (half of 1s, then of 2s)", waits)
		}
		calls := rec.CallRecords()
		if len(calls) != 1 || calls[0].Attempts != 3 || calls[0].Outcome != taxonomy.OutcomeFailed ||
			calls[0].Elapsed != 1500*time.Millisecond || calls[0].Told != toolmw.ForModel(toolmw.Result{}, err) {
			t.Errorf("calls: %+v", calls)
		}
		if evs := rec.Events(); len(evs) != 1 || evs[0].Attempts != 3 || evs[0].Code != taxonomy.CodeUpstreamUnavailable {
			t.Errorf("events: %+v", evs)
		}
		rec.Reset()
		if len(rec.CallRecords())+len(rec.AttemptRecords())+len(rec.Events()) != 0 {
			t.Error("Reset kept records")
		}
	})
}
