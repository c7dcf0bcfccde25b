// Package toolmwtest is toolmw's test kit for code built on it: what the
// project's own tests use, for a chain, an adapter or an agent loop of
// your own.
//
//   - scripted tools: [OK], [Returning], and [Script] ([NewScript],
//     [FailTimes]) — fail n times then succeed, [Hang] until cancelled,
//     answer after a delay, return parts — recording every call's
//     arguments;
//   - a [Recorder] that asserts what a chain did: each call as the caller
//     saw it (outcome, attempts, what the model was told), each attempt as
//     the tool saw it (arguments, error, the waits between attempts), and
//     the run events (it is an events.Sink);
//   - a scripted [Model] and [RunLoop], the agent loop of package turn, to
//     run a whole run against scripted model turns: that it gives up when
//     the run budget is used up, that an open circuit ends it, what the
//     model is told;
//   - time: clock.Fake drives every layer's WithClock, and testing/synctest
//     drives the system clock the layers default to;
//   - failure: middleware/chaos injects faults into calls and stores.
//
// A test of "my loop gives up after the run budget":
//
//	search := toolmwtest.FailTimes(1000, taxonomy.Transient("upstream_unavailable", "down"), toolmw.Text("ok"))
//	box := toolmw.NewToolbox(middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).Middleware())
//	box.Register(toolmw.Spec{Name: "search", Idempotent: true}, search.Tool())
//	model := toolmwtest.NewModel(toolmwtest.ModelTurn{Calls: []turn.Call{{ID: "c1", Name: "search", Args: json.RawMessage(`{}`)}}})
//	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(4))
//	run := toolmwtest.RunLoop(ctx, box, model, 50, turn.Options{})
//	if !errors.Is(run.Err, taxonomy.ErrRunLimitExceeded) || search.Calls() != 4 {
//		t.Fatalf("the run: %v after %d calls", run.Err, search.Calls())
//	}
//
// For adapters:
//
//   - [TestAdapter] runs the contract of an adapter that dispatches a
//     model turn's tool calls (through package turn) on your adapter:
//     answers in the model's order, the parallelism bound, contained
//     panics and Goexit, the typed stops, only offered tools;
//   - [Barrier] proves that calls were in flight at the same time;
//   - [Envelope], [DecodeJSON], [SameJSON] and [NoSecrets] read what a
//     model is sent;
//   - package replay serves recorded model-API replies to a real SDK
//     client on 127.0.0.1, and package canary holds planted secrets to
//     prove that none reaches a span, a log line or the model.
//
// The store ports have kits of their own beside each layer (approvaltest,
// breakertest, ratelimittest, runlimittest, spendtest, budgettest,
// dedupetest, and store/storetest for kept results).
package toolmwtest
