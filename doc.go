// Package toolmw makes calling LLM-agent tools safe and predictable.
//
// A tool is a plain function, [Tool]. Middlewares ([Middleware], func(Tool)
// Tool) wrap it like net/http handlers, in the order the user chooses:
// classification into the typed errors of package taxonomy, scrubbing,
// timeout, retry with budgets, circuit breaking, rate limiting, panic
// recovery, tracing, logging and run events each live in their own package
// under middleware/, and middleware.Default assembles the usual order.
//
// [Wrap] validates a [Spec] at start-up and returns the decorated tool. Every
// call through it carries a [Call] in its context ([CallFrom]): the tool's
// name, the model's call id ([WithCallID]), whether the tool is idempotent,
// and the attempt number, so layers know whom they serve.
//
// [Typed] turns func(ctx, In) (Out, error) into a Tool with strict JSON
// decoding, and publishes the JSON Schema of In, and of Out when it is a
// JSON object (structured output: [Spec.OutputSchema], which the result
// layer checks results against); [Toolbox] registers tools and calls them
// by name, and lists their definitions per model API; [ForModel] renders a
// result or an error for the model, wrapped as untrusted data.
//
// Every error that leaves a toolmw chain is a taxonomy.Error with a stable
// kind and code, or a context cancellation, so an agent loop can tell "try
// again" from "the tool said no" from "stop the run".
//
// # Concurrency
//
// One rule holds in every package of this module and its adapters, and the
// documentation of a name says so only where it differs:
//
//   - an Option (of any layer, adapter or store) is applied once, by the
//     function it is passed to, and may be reused and shared between
//     goroutines;
//   - a struct that only carries values (an event, a report, a record, a
//     decision) is a plain value: safe to copy and to read from many
//     goroutines; do not modify one that is shared;
//   - a Tool, a Middleware, and what a constructor returns (a layer's
//     state, a Toolbox, a store) is safe for concurrent use.
package toolmw
