package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
	"github.com/toolmw/toolmw/adapters/anthropic/internal/replay"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/testrig/adaptertest"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

type cityIn struct {
	City string `json:"city"`
}

// TestParallelCallsConcurrentInOrder: the two calls of one turn are in
// flight at once (each waits at a barrier for the other), the first
// finishes last, and the answers still go back in the model's order.
func TestParallelCallsConcurrentInOrder(t *testing.T) {
	b := adaptertest.NewBarrier(2)
	var (
		mu       sync.Mutex
		finished []string
	)
	secondDone := make(chan struct{})
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	if err := box.Register(toolmw.Spec{Name: "weather", Description: "Weather in a city", Idempotent: true},
		toolmw.Typed(func(ctx context.Context, in cityIn) (string, error) {
			if err := b.Wait(ctx); err != nil {
				return "", err
			}
			defer b.Leave()
			if in.City == "Paris" { // the model's first call ends last
				select {
				case <-secondDone:
				case <-time.After(adaptertest.Guard):
					return "", adaptertest.ErrNotConcurrent
				}
			}
			mu.Lock()
			finished = append(finished, in.City)
			mu.Unlock()
			if in.City == "Tokyo" {
				close(secondDone)
			}
			return "sunny in " + in.City, nil
		})); err != nil {
		t.Fatal(err)
	}
	calls := []replay.ToolUse{
		{ID: "toolu_01Paris000000000000001", Name: "weather", Input: `{"city":"Paris"}`},
		{ID: "toolu_01Tokyo000000000000002", Name: "weather", Input: `{"city":"Tokyo"}`},
	}
	rp := replay.New("/v1/messages", replay.ToolUses("", calls...), replay.Answer("Both sunny."))
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	turns, answer, err := loop(context.Background(), serve(t, rp), tools, "Weather in Paris and Tokyo?")
	if err != nil || answer != "Both sunny." {
		t.Fatalf("loop = %q, %v", answer, err)
	}
	if n := b.Most(); n != 2 {
		t.Errorf("at most %d calls were in flight at once, want 2", n)
	}
	if len(finished) != 2 || finished[0] != "Tokyo" || finished[1] != "Paris" {
		t.Fatalf("finished %v, want Tokyo before Paris", finished)
	}
	msgs := adaptertest.Decode(t, rp.Requests()[1])["messages"].([]any)
	results := msgs[2].(map[string]any)["content"].([]any)
	for i, c := range calls {
		b := results[i].(map[string]any)
		_, content := adaptertest.Envelope(t, resultText(t, b))
		if b["tool_use_id"] != c.ID || content != "sunny in "+[]string{"Paris", "Tokyo"}[i] {
			t.Errorf("answer %d = %v %q, want %s with Paris then Tokyo", i, b["tool_use_id"], content, c.ID)
		}
	}
	if turns[0].Calls[0].ToolUseID != calls[0].ID || turns[0].Calls[1].ToolUseID != calls[1].ID {
		t.Errorf("Turn.Calls out of the model's order: %v", turns[0].Calls)
	}
}

// TestMaxParallel: WithMaxParallel(1) runs the calls one at a time, in
// the model's order.
func TestMaxParallel(t *testing.T) {
	var in, maxIn atomic.Int32
	var mu sync.Mutex
	var order []string
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "step"}, toolmw.Typed(func(ctx context.Context, a cityIn) (string, error) {
		n := in.Add(1)
		defer in.Add(-1)
		for {
			m := maxIn.Load()
			if n <= m || maxIn.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		order = append(order, a.City)
		mu.Unlock()
		return a.City, nil
	})); err != nil {
		t.Fatal(err)
	}
	tools, err := toolanthropic.New(box, toolanthropic.WithMaxParallel(1))
	if err != nil {
		t.Fatal(err)
	}
	var calls []anthropic.ContentBlockUnion
	for _, c := range []string{"a", "b", "c", "d", "e"} {
		calls = append(calls, toolUse("id_"+c, "step", `{"city":"`+c+`"}`))
	}
	turn, err := tools.Call(context.Background(), calls)
	if err != nil {
		t.Fatal(err)
	}
	if maxIn.Load() != 1 || len(order) != 5 || order[0] != "a" || order[4] != "e" {
		t.Fatalf("max in flight %d, order %v; want 1 and a…e", maxIn.Load(), order)
	}
	for i, o := range turn.Calls {
		if o.ToolUseID != calls[i].ID || o.Err != nil {
			t.Errorf("outcome %d = %+v", i, o)
		}
	}
}

// toolUse is a tool_use block as the SDK decodes one; an empty input is
// sent without the input field.
func toolUse(id, name, input string) anthropic.ContentBlockUnion {
	block := map[string]any{"type": "tool_use", "id": id, "name": name, "caller": map[string]any{"type": "direct"}}
	if input != "" {
		block["input"] = json.RawMessage(input)
	}
	raw, err := json.Marshal(block)
	if err != nil {
		panic(err)
	}
	var u anthropic.ContentBlockUnion
	if err := json.Unmarshal(raw, &u); err != nil {
		panic(err)
	}
	return u
}

// TestRunBudgetAcrossTurns: one run budget (budget.WithRun before the
// loop) spans the turns. lookup may make 2 attempts in the run: turn 1
// uses both, turn 2's lookup is refused as run-limit-exceeded on the wire
// while note still runs, and turn 3, which wants only lookup, stops the
// run with a typed Stop.
func TestRunBudgetAcrossTurns(t *testing.T) {
	var lookups atomic.Int32
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	for _, name := range []string{"lookup", "note"} {
		if err := box.Register(toolmw.Spec{Name: name, Idempotent: true}, toolmw.Typed(func(ctx context.Context, in cityIn) (string, error) {
			if name == "lookup" {
				lookups.Add(1)
			}
			return name + " " + in.City, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	rp := replay.New("/v1/messages",
		replay.ToolUses("",
			replay.ToolUse{ID: "toolu_t1a", Name: "lookup", Input: `{"city":"Oslo"}`},
			replay.ToolUse{ID: "toolu_t1b", Name: "lookup", Input: `{"city":"Rome"}`}),
		replay.ToolUses("",
			replay.ToolUse{ID: "toolu_t2a", Name: "lookup", Input: `{"city":"Lima"}`},
			replay.ToolUse{ID: "toolu_t2b", Name: "note", Input: `{"city":"Lima"}`}),
		replay.ToolUses("", replay.ToolUse{ID: "toolu_t3a", Name: "lookup", Input: `{"city":"Lima"}`}),
		replay.Answer("never sent"))
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	ctx := budget.WithRun(context.Background(), budget.WithToolMaxAttempts("lookup", 2))
	turns, _, err := loop(ctx, serve(t, rp), tools, "Look them up.")
	var stop *toolanthropic.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindRunLimitExceeded || !errors.Is(err, taxonomy.ErrRunLimitExceeded) {
		t.Fatalf("loop ended with %v, want a run-limit-exceeded Stop", err)
	}
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindRunLimitExceeded || info.Retryable {
		t.Errorf("InfoOf(stop) = %+v, want run-limit-exceeded, not retryable", info)
	}
	if len(turns) != 3 || len(rp.Requests()) != 3 {
		t.Fatalf("%d turns, %d requests; want 3 and 3", len(turns), len(rp.Requests()))
	}
	if n := lookups.Load(); n != 2 {
		t.Errorf("lookup ran %d times, want 2 (its run cap)", n)
	}
	msgs := adaptertest.Decode(t, rp.Requests()[2])["messages"].([]any)
	results := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
	refused, ran := results[0].(map[string]any), results[1].(map[string]any)
	if source, content := adaptertest.Envelope(t, resultText(t, refused)); refused["tool_use_id"] != "toolu_t2a" || source != toolmw.SourceError ||
		refused["is_error"] != true || content[:len("run-limit-exceeded run_attempts_exhausted")] != "run-limit-exceeded run_attempts_exhausted" {
		t.Errorf("turn 2's lookup answered %v %s %q, want run-limit-exceeded with is_error", refused["tool_use_id"], source, content)
	}
	if _, content := adaptertest.Envelope(t, resultText(t, ran)); ran["tool_use_id"] != "toolu_t2b" || ran["is_error"] != false || content != "note Lima" {
		t.Errorf("turn 2's note answered %v %q", ran["tool_use_id"], content)
	}
	// The stopped turn's answers are complete.
	if got := turns[2].Blocks(); len(got) != 1 {
		t.Errorf("the stopped turn has %d answers, want 1", len(got))
	}
}

// TestCircuitOpenStop: when every tool the model wants has an open
// circuit, the dispatcher stops the run with KindCircuitOpen and the wait
// until a circuit half-opens.
func TestCircuitOpenStop(t *testing.T) {
	const openFor = time.Hour
	box := toolmw.NewToolbox(middleware.Default(
		middleware.WithRetry(retry.WithMaxAttempts(1)),
		middleware.WithBreaker(breaker.WithConsecutiveFailures(1), breaker.WithOpenFor(openFor)),
	).Middleware())
	var runs atomic.Int32
	for _, name := range []string{"flights", "hotels"} {
		if err := box.Register(toolmw.Spec{Name: name, Idempotent: true}, toolmw.Typed(func(ctx context.Context, in cityIn) (string, error) {
			runs.Add(1)
			return "", taxonomy.Transient("upstream_unavailable", "the booking system is down")
		})); err != nil {
			t.Fatal(err)
		}
	}
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Turn 1 trips both circuits: failures are answers, not a stop.
	turn, err := tools.Call(ctx, []anthropic.ContentBlockUnion{
		toolUse("c1", "flights", `{"city":"Oslo"}`), toolUse("c2", "hotels", `{"city":"Oslo"}`)})
	if err != nil || taxonomy.InfoOf(turn.Calls[0].Err).Code != "upstream_unavailable" {
		t.Fatalf("turn 1 = %v, %v; want two upstream failures and no stop", turn.Calls, err)
	}
	// Turn 2: one open circuit and an unknown tool is not a stop.
	if _, err := tools.Call(ctx, []anthropic.ContentBlockUnion{
		toolUse("c3", "flights", `{"city":"Oslo"}`), toolUse("c4", "cars", `{}`)}); err != nil {
		t.Fatalf("turn 2 stopped with %v; the model can act on not-found", err)
	}
	// Turn 3: every call meets an open circuit.
	turn, err = tools.Call(ctx, []anthropic.ContentBlockUnion{
		toolUse("c5", "flights", `{"city":"Oslo"}`), toolUse("c6", "hotels", `{"city":"Oslo"}`)})
	var stop *toolanthropic.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCircuitOpen || !errors.Is(err, taxonomy.ErrCircuitOpen) {
		t.Fatalf("turn 3 ended with %v, want a circuit-open Stop", err)
	}
	if stop.RetryAfter <= 0 || stop.RetryAfter > openFor {
		t.Errorf("RetryAfter = %v, want within (0, %v]", stop.RetryAfter, openFor)
	}
	if ok, after := taxonomy.ShouldRetry(err, true); !ok || after != stop.RetryAfter {
		t.Errorf("ShouldRetry(stop) = %v, %v; want true, %v", ok, after, stop.RetryAfter)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the tools ran %d times, want 2 (only before the circuits opened)", n)
	}
	for _, o := range turn.Calls {
		if source, content := adaptertest.Envelope(t, o.Text); source != toolmw.SourceError || content[:len("circuit-open")] != "circuit-open" {
			t.Errorf("call %s answered %s %q, want circuit-open", o.ToolUseID, source, content)
		}
	}
}

// TestCancellation: a context cancelled while the calls are in flight stops
// the run with KindCancelled; every call is still answered.
func TestCancellation(t *testing.T) {
	b := adaptertest.NewBarrier(2)
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := box.Register(toolmw.Spec{Name: "slow"}, toolmw.Typed(func(ctx context.Context, in cityIn) (string, error) {
		if err := b.Wait(ctx); err != nil {
			return "", err
		}
		cancel() // the user gives up while both calls run
		<-ctx.Done()
		return "", ctx.Err()
	})); err != nil {
		t.Fatal(err)
	}
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := tools.Call(ctx, []anthropic.ContentBlockUnion{
		toolUse("c1", "slow", `{"city":"a"}`), toolUse("c2", "slow", `{"city":"b"}`)})
	var stop *toolanthropic.Stop
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("ended with %v, want a cancelled Stop wrapping context.Canceled", err)
	}
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindCancelled {
		t.Errorf("InfoOf(stop).Kind = %s, want tool-cancelled", info.Kind)
	}
	if msgs := turn.Blocks(); len(msgs) != 2 {
		t.Fatalf("%d answers, want 2", len(msgs))
	}
	for _, o := range turn.Calls {
		if taxonomy.OutcomeOf(o.Err) != taxonomy.OutcomeCancelled {
			t.Errorf("call %s: outcome %s, want cancelled", o.ToolUseID, taxonomy.OutcomeOf(o.Err))
		}
	}

	// Already cancelled: nothing runs, everything is answered.
	var ran atomic.Bool
	box2 := toolmw.NewToolbox()
	if err := box2.Register(toolmw.Spec{Name: "any"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		ran.Store(true)
		return "", nil
	})); err != nil {
		t.Fatal(err)
	}
	tools2, _ := toolanthropic.New(box2)
	turn, err = tools2.Call(ctx, []anthropic.ContentBlockUnion{toolUse("c3", "any", `{}`)})
	if !errors.As(err, &stop) || stop.Kind != taxonomy.KindCancelled || ran.Load() || len(turn.Calls) != 1 {
		t.Fatalf("pre-cancelled: %v, ran %v, %d outcomes", err, ran.Load(), len(turn.Calls))
	}
	if source, content := adaptertest.Envelope(t, turn.Calls[0].Text); source != toolmw.SourceError || content != "tool-cancelled cancelled" {
		t.Errorf("pre-cancelled call answered %s %q", source, content)
	}
}

// TestOnlyOfferedTools: a call of a tool the model was not shown — unknown,
// registered after New, or a toolset member — is answered as
// tool-not-found without reaching the box; an empty input reads as {};
// blocks other than tool_use are skipped.
func TestOnlyOfferedTools(t *testing.T) {
	var lateRan atomic.Bool
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "ping"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		return "pong", nil
	})); err != nil {
		t.Fatal(err)
	}
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	if err := box.Register(toolmw.Spec{Name: "late"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		lateRan.Store(true)
		return "", nil
	})); err != nil {
		t.Fatal(err)
	}
	var member, text anthropic.ContentBlockUnion
	if err := json.Unmarshal([]byte(`{"type":"tool_use","id":"c4","name":"ping","input":{},"toolset_name":"browser","caller":{"type":"direct"}}`), &member); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"type":"text","text":"calling"}`), &text); err != nil {
		t.Fatal(err)
	}
	turn, err := tools.Call(context.Background(), []anthropic.ContentBlockUnion{
		text, toolUse("c1", "ping", ``), toolUse("c2", "late", `{}`), toolUse("c3", "no such tool!", `{}`), member})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pong", "tool-not-found tool_not_found: no tool named late",
		"tool-not-found tool_not_found: no tool has the requested name", "tool-not-found tool_not_found: no tool named ping"}
	for i, o := range turn.Calls {
		if _, content := adaptertest.Envelope(t, o.Text); content != want[i] {
			t.Errorf("call %s answered %q, want %q", o.ToolUseID, content, want[i])
		}
	}
	if lateRan.Load() {
		t.Error("a tool registered after New ran")
	}
	if got := tools.Names(); len(got) != 1 || got[0] != "ping" {
		t.Errorf("Names() = %v, want [ping]", got)
	}
}

// TestPanicReachesCaller: a panic in a tool with no recovery layer is
// raised in the caller's goroutine, as a sequential call would raise it,
// after the turn's other calls have returned.
func TestPanicReachesCaller(t *testing.T) {
	var other atomic.Bool
	box := toolmw.NewToolbox()
	_ = box.Register(toolmw.Spec{Name: "boom"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		panic("boom")
	}))
	_ = box.Register(toolmw.Spec{Name: "fine"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		other.Store(true)
		return "", nil
	}))
	tools, err := toolanthropic.New(box)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if p := recover(); p != "boom" {
			t.Fatalf("recovered %v, want the tool's panic", p)
		}
		if !other.Load() {
			t.Error("the other call did not run")
		}
	}()
	_, _ = tools.Call(context.Background(), []anthropic.ContentBlockUnion{
		toolUse("c1", "boom", `{}`), toolUse("c2", "fine", `{}`)})
	t.Fatal("Call returned")
}

// TestGoexit: a tool that ends its goroutine (runtime.Goexit, as
// t.FailNow does) ends its call as tool_exited; with one worker, a fresh
// one takes the calls left, and the turn is complete.
func TestGoexit(t *testing.T) {
	box := toolmw.NewToolbox()
	_ = box.Register(toolmw.Spec{Name: "exits"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		runtime.Goexit()
		return "", nil
	}))
	_ = box.Register(toolmw.Spec{Name: "fine"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		return "fine", nil
	}))
	tools, err := toolanthropic.New(box, toolanthropic.WithMaxParallel(1))
	if err != nil {
		t.Fatal(err)
	}
	turn, err := tools.Call(context.Background(), []anthropic.ContentBlockUnion{
		toolUse("c1", "fine", `{}`), toolUse("c2", "exits", `{}`), toolUse("c3", "fine", `{}`)})
	if err != nil || len(turn.Calls) != 3 {
		t.Fatalf("turn = %v, %v", turn, err)
	}
	for i, want := range []string{"fine", "tool-failed tool_exited: the tool ended its goroutine (runtime.Goexit)", "fine"} {
		if _, content := adaptertest.Envelope(t, turn.Calls[i].Text); content != want {
			t.Errorf("call %d answered %q, want %q", i+1, content, want)
		}
	}
}

// TestCallsCounted: for a box without a retry layer, WithCallsCounted
// makes each call take an attempt from the run budget.
func TestCallsCounted(t *testing.T) {
	var runs atomic.Int32
	box := toolmw.NewToolbox()
	_ = box.Register(toolmw.Spec{Name: "once"}, toolmw.Typed(func(ctx context.Context, in struct{}) (string, error) {
		runs.Add(1)
		return "ok", nil
	}))
	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(1))
	for _, counted := range []bool{false, true} {
		runs.Store(0)
		var opts []toolanthropic.Option
		if counted {
			opts = append(opts, toolanthropic.WithCallsCounted())
		}
		tools, _ := toolanthropic.New(box, opts...)
		turn, err := tools.Call(ctx, []anthropic.ContentBlockUnion{toolUse("a", "once", `{}`), toolUse("b", "once", `{}`)})
		if counted {
			if runs.Load() != 1 || taxonomy.InfoOf(turn.Calls[1].Err).Kind != taxonomy.KindRunLimitExceeded && taxonomy.InfoOf(turn.Calls[0].Err).Kind != taxonomy.KindRunLimitExceeded {
				t.Errorf("counted: %d runs, outcomes %v; want 1 run and one run-limit-exceeded", runs.Load(), turn.Calls)
			}
			if err != nil {
				t.Errorf("counted: stopped with %v although one call ran", err)
			}
		} else if runs.Load() != 2 || err != nil {
			t.Errorf("uncounted: %d runs, %v; want 2, nil (nothing takes from the budget)", runs.Load(), err)
		}
	}
}

// TestOptions: invalid options and a nil box are definition errors.
func TestOptions(t *testing.T) {
	box := toolmw.NewToolbox()
	if _, err := toolanthropic.New(box, toolanthropic.WithMaxParallel(-1)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Errorf("WithMaxParallel(-1): %v, want option_invalid", err)
	}
	if _, err := toolanthropic.New(nil); taxonomy.InfoOf(err).Kind != taxonomy.KindDefinitionInvalid {
		t.Errorf("New(nil): %v, want a definition error", err)
	}
	tools, err := toolanthropic.New(box, nil, toolanthropic.WithMaxParallel(0))
	if err != nil || len(tools.Params()) != 0 {
		t.Errorf("defaults: %v", err)
	}
	var nilTurn *toolanthropic.Turn
	if nilTurn.Blocks() != nil {
		t.Error("a nil Turn has answers")
	}
	turn, err := tools.Call(context.Background(), nil)
	if err != nil || len(turn.Calls) != 0 || len(turn.Blocks()) != 0 {
		t.Errorf("no calls: %v, %v", turn, err)
	}
}
