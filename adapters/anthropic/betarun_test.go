package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

// TestBetaToolsParallel: the runner's calls of one turn are in flight at
// once (each waits at a barrier all three must reach), and each gets its
// own tool_use id, two calls with the same input included (which of those
// two ids each gets is not known: they are the same call); each answer
// goes back under its block's id.
func TestBetaToolsParallel(t *testing.T) {
	barrier := toolmwtest.NewBarrier(3)
	var ids callIDs
	box := toolmw.NewToolbox(fastStack(t, ids.layer()))
	mustRegister(t, box, "get_booking", func(ctx context.Context, in bookingIn) (string, error) {
		if err := barrier.Wait(ctx); err != nil {
			return "", err
		}
		call, _ := toolmw.CallFrom(ctx)
		return in.Booking + " via " + call.ID, nil
	})
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	rp := replay.New("/v1/messages",
		replay.ToolUses("",
			replay.ToolUse{ID: "toolu_A", Name: "get_booking", Input: `{"booking":"BK-1"}`},
			replay.ToolUse{ID: "toolu_B", Name: "get_booking", Input: `{"booking":"BK-2"}`},
			replay.ToolUse{ID: "toolu_C", Name: "get_booking", Input: `{"booking":"BK-1"}`}),
		replay.Answer("done"))
	runner := newRunner(serve(t, rp), tools.BetaTools(), ask("Both."))
	ctx, run := toolanthropic.WithBetaRunner(context.Background(), runner)
	_, err = runner.RunToCompletion(ctx)
	if err := run.End(err); err != nil {
		t.Fatal(err)
	}
	got := ids.of("get_booking")
	slices.Sort(got)
	if !slices.Equal(got, []string{"toolu_A", "toolu_B", "toolu_C"}) {
		t.Errorf("the calls had ids %v, want one each of toolu_A, toolu_B, toolu_C", got)
	}
	results := wireResults(t, rp.Requests())
	var same []string
	for id, booking := range map[string]string{"toolu_A": "BK-1", "toolu_B": "BK-2", "toolu_C": "BK-1"} {
		r := onlyResult(t, results, id)
		_, content := envelopeAfter(t, "", r.text)
		got, via, _ := strings.Cut(content, " via ")
		if got != booking || booking == "BK-2" && via != id {
			t.Errorf("%s answered %q", id, content)
		}
		if booking == "BK-1" {
			same = append(same, via)
		}
	}
	if slices.Sort(same); !slices.Equal(same, []string{"toolu_A", "toolu_C"}) {
		t.Errorf("the two same calls ran with ids %v, want toolu_A and toolu_C", same)
	}
}

// TestBetaRunCancelled: the run's context reaches the tool; cancelled
// while a call runs, the run ends with a cancelled Stop that
// errors.Is(context.Canceled) sees, and the model is not asked again.
func TestBetaRunCancelled(t *testing.T) {
	started := make(chan struct{})
	var sawCancel atomic.Bool
	box := toolmw.NewToolbox(fastStack(t))
	mustRegister(t, box, "wait_for_it", func(ctx context.Context, in bookingIn) (string, error) {
		close(started)
		<-ctx.Done()
		sawCancel.Store(true)
		return "", ctx.Err()
	})
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	rp := replay.New("/v1/messages",
		replay.ToolUses("", replay.ToolUse{ID: "toolu_W", Name: "wait_for_it", Input: `{"booking":"BK-3"}`}),
		replay.Answer("never"))
	runner := newRunner(serve(t, rp), tools.BetaTools(), ask("Wait."))
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		cancel()
	}()
	ctx, run := toolanthropic.WithBetaRunner(parent, runner)
	_, err = runner.RunToCompletion(ctx)
	err = run.End(err)
	var stop *toolanthropic.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("the run ended with %v, want a cancelled Stop", err)
	}
	if !sawCancel.Load() {
		t.Error("the tool did not see the cancellation")
	}
	if n := len(rp.Requests()); n != 1 {
		t.Errorf("the API was asked %d times, want 1", n)
	}

	// Cancelled while the model is asked, no tool running: the runner's
	// error is the request's, End makes it the cancelled Stop.
	parent2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	runner = newRunner(serve(t, replay.New("/v1/messages")), tools.BetaTools(), ask("Wait."))
	ctx, run = toolanthropic.WithBetaRunner(parent2, runner)
	_, err = runner.RunToCompletion(ctx)
	if err = run.End(err); !errors.As(err, &stop) || stop.Kind != taxonomy.KindCancelled {
		t.Errorf("a run cancelled before it began ended with %v", err)
	}
}

// TestBetaStopLetsSiblingsFinish: a call that stops the run (approval
// pending) does not cancel the turn's other call in flight: it finishes
// with its own context alive, and its answer is in the runner's history;
// the model is not asked again.
func TestBetaStopLetsSiblingsFinish(t *testing.T) {
	desk := approval.NewDesk()
	noteStarted, stopped := make(chan struct{}), make(chan struct{})
	// The gated call goes on only once note runs: a call the runner has
	// not started when the stop comes is never started.
	hold := middleware.Layer{Name: "hold", Middleware: func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			if call, _ := toolmw.CallFrom(ctx); call.Tool == "cancel_booking" {
				<-noteStarted
			}
			return next(ctx, args)
		}
	}}
	box := toolmw.NewToolbox(fastStack(t, hold,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))}))
	var siblingCancelled atomic.Bool
	mustRegister(t, box, "note", func(ctx context.Context, in bookingIn) (string, error) {
		close(noteStarted)
		<-stopped
		siblingCancelled.Store(ctx.Err() != nil)
		return "noted " + in.Booking, nil
	})
	mustRegister(t, box, "cancel_booking", func(ctx context.Context, in bookingIn) (string, error) {
		return "cancelled", nil
	})
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	rp := replay.New("/v1/messages",
		replay.ToolUses("",
			replay.ToolUse{ID: "toolu_N", Name: "note", Input: `{"booking":"BK-4"}`},
			replay.ToolUse{ID: "toolu_X", Name: "cancel_booking", Input: `{"booking":"BK-4"}`}),
		replay.Answer("never"))
	runner := newRunner(serve(t, rp), tools.BetaTools(), ask("Note and cancel."))
	ctx, run := toolanthropic.WithBetaRunner(budget.WithRun(context.Background(), budget.WithID("run_siblings")), runner)
	context.AfterFunc(ctx, func() { close(stopped) }) // the stop cancels the runner's context
	_, err = runner.RunToCompletion(ctx)
	var stop *toolanthropic.Stop
	if err = run.End(err); !errors.As(err, &stop) || stop.Kind != taxonomy.KindApprovalPending {
		t.Fatalf("the run ended with %v, want approval-pending", err)
	}
	if siblingCancelled.Load() {
		t.Error("the sibling's context ended with the stop")
	}
	if n := len(rp.Requests()); n != 1 {
		t.Errorf("the API was asked %d times, want 1", n)
	}
	history := runner.Messages()
	last := history[len(history)-1]
	if last.OfUser == nil || len(last.OfUser.Content) != 2 {
		t.Fatalf("the runner's history ends with %+v, want the turn's two tool_results", last)
	}
	note := last.OfUser.Content[0].OfToolResult
	if note == nil || note.ToolUseID != "toolu_N" || note.IsError.Value || note.Content[0].OfText == nil ||
		note.Content[0].OfText.Text != `<untrusted-data source="tool_result">noted BK-4</untrusted-data>` {
		t.Errorf("the sibling's answer: %+v", note)
	}
}

// TestBetaRunLimitStops: a call the run budget refuses stops the run with
// a run-limit-exceeded Stop (WithCallsCounted, on a box without a retry
// layer), after the calls the budget allowed.
func TestBetaRunLimitStops(t *testing.T) {
	var lookups atomic.Int32
	box := toolmw.NewToolbox()
	mustRegister(t, box, "lookup", func(ctx context.Context, in bookingIn) (string, error) {
		lookups.Add(1)
		return "found " + in.Booking, nil
	})
	tools, err := toolanthropic.New(box, toolanthropic.WithCallsCounted())
	if err != nil {
		t.Fatal(err)
	}
	rp := replay.New("/v1/messages",
		replay.ToolUses("", replay.ToolUse{ID: "toolu_L1", Name: "lookup", Input: `{"booking":"BK-5"}`}),
		replay.ToolUses("", replay.ToolUse{ID: "toolu_L2", Name: "lookup", Input: `{"booking":"BK-6"}`}),
		replay.Answer("never"))
	runner := newRunner(serve(t, rp), tools.BetaTools(), ask("Look twice."))
	ctx, run := toolanthropic.WithBetaRunner(budget.WithRun(context.Background(), budget.WithToolMaxAttempts("lookup", 1)), runner)
	_, err = runner.RunToCompletion(ctx)
	err = run.End(err)
	var stop *toolanthropic.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindRunLimitExceeded || !errors.Is(err, taxonomy.ErrRunLimitExceeded) {
		t.Fatalf("the run ended with %v, want run-limit-exceeded", err)
	}
	if lookups.Load() != 1 || len(rp.Requests()) != 2 {
		t.Errorf("%d lookups, %d requests; want 1 and 2", lookups.Load(), len(rp.Requests()))
	}
}

// TestBetaToolsWithoutRun: the tools work in a runner run without
// WithBetaRunner, with less: the calls have no call id, and a call that
// would stop the run is only an answer (here approval-pending, which no
// reviewer can approve without an id), so the runner goes on.
func TestBetaToolsWithoutRun(t *testing.T) {
	var ids callIDs
	desk := approval.NewDesk()
	box := toolmw.NewToolbox(fastStack(t,
		middleware.Layer{Name: middleware.Approval, Middleware: desk.Middleware(approval.Tools("cancel_booking"))},
		ids.layer()))
	mustRegister(t, box, "lookup", func(ctx context.Context, in bookingIn) (string, error) { return "found", nil })
	mustRegister(t, box, "cancel_booking", func(ctx context.Context, in bookingIn) (string, error) { return "cancelled", nil })
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	rp := replay.New("/v1/messages",
		replay.ToolUses("",
			replay.ToolUse{ID: "toolu_L", Name: "lookup", Input: `{"booking":"BK-7"}`},
			replay.ToolUse{ID: "toolu_X", Name: "cancel_booking", Input: `{"booking":"BK-7"}`}),
		replay.Answer("I could not cancel it."))
	runner := newRunner(serve(t, rp), tools.BetaTools(), ask("Cancel."))
	if _, err := runner.RunToCompletion(budget.WithRun(context.Background(), budget.WithID("run_without"))); err != nil {
		t.Fatal(err)
	}
	if got := ids.of("lookup"); !slices.Equal(got, []string{""}) {
		t.Errorf("lookup had ids %v, want none", got)
	}
	x := onlyResult(t, wireResults(t, rp.Requests()), "toolu_X")
	if _, content := envelopeAfter(t, "Error: ", x.text); !x.isError || taxonomy.Kind(content[:len(taxonomy.KindApprovalPending)]) != taxonomy.KindApprovalPending {
		t.Errorf("the gated call went back as %+v", x)
	}
}

// TestBetaToolsetMemberNotOffered: a toolset member's call that bears the
// name of one of the box's tools is answered tool-not-found without
// reaching the box, as Tools.Call answers it; the runner goes on.
func TestBetaToolsetMemberNotOffered(t *testing.T) {
	var pings atomic.Int32
	box := toolmw.NewToolbox()
	mustRegister(t, box, "ping", func(ctx context.Context, in bookingIn) (string, error) {
		pings.Add(1)
		return "pong", nil
	})
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	member := strings.Replace(string(replay.ToolUses("", replay.ToolUse{ID: "toolu_M", Name: "ping", Input: `{}`})),
		`"caller"`, `"toolset_name":"browser","caller"`, 1)
	rp := replay.New("/v1/messages", []byte(member), replay.Answer("done"))
	runner := newRunner(serve(t, rp), tools.BetaTools(), ask("Ping."))
	ctx, run := toolanthropic.WithBetaRunner(context.Background(), runner)
	_, err = runner.RunToCompletion(ctx)
	if err := run.End(err); err != nil {
		t.Fatal(err)
	}
	r := onlyResult(t, wireResults(t, rp.Requests()), "toolu_M")
	if _, content := envelopeAfter(t, "Error: ", r.text); !r.isError || content != "tool-not-found tool_not_found: no tool named ping" || pings.Load() != 0 {
		t.Errorf("the member's call went back as %+v after %d pings", r, pings.Load())
	}
}
