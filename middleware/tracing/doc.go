// Package tracing traces tool calls with OpenTelemetry and records their
// duration and outcome as metrics.
//
// It is the only toolmw package that imports the OpenTelemetry API; the SDK
// is used only in its tests and examples. Pass providers with
// [WithTracerProvider] and [WithMeterProvider]; by default the global ones
// are used, looked up when the middleware wraps a tool.
//
// # Spans
//
// [New] starts one span per call, of kind Internal, named
// "execute_tool {tool}" ("execute_tool" when the context carries no
// toolmw.Call), following the OpenTelemetry GenAI semantic conventions for
// tool execution:
//
//	gen_ai.operation.name  "execute_tool"
//	gen_ai.tool.name       the tool's name, when known
//	gen_ai.tool.type       Spec.Type ("function" unless the spec says otherwise), when known
//	gen_ai.tool.call.id    the model's call id (toolmw.WithCallID), when known
//	error.type             the taxonomy code, when the call returned an error
//
// and toolmw's own attributes, under the toolmw namespace:
//
//	toolmw.outcome         ok, failed, refused (tool-refused), not_permitted (tool-not-permitted), timed_out, cancelled,
//	                       pending (approval-pending), denied (approval-denied), blocked (guardrail-blocked)
//	toolmw.attempts        the attempts made, read from the Call once the call returned
//	toolmw.fallback        what stood in for the result (toolmw.SetFallback: last_good, function), when something did
//	toolmw.degraded        the layer that decided on local state because its shared store failed (toolmw.SetDegraded)
//	toolmw.error.kind      the taxonomy kind, on error
//	toolmw.error.code      the taxonomy code, on error
//	toolmw.retryable       whether the error is retryable, on error
//	toolmw.result.parts    the number of parts of a successful result with parts (Result.AllParts)
//	toolmw.result.part_descriptions
//	                       the first 8 of them described, "image image/png 48213 bytes", then "+N more"
//
// A result's parts are described by kind, MIME type and size only: never
// their text, JSON, names, URIs or bytes. A kind the tool made up reads
// "unknown" and a MIME type that is not a well-formed media type, or holds
// something the default scrubber finds, reads "invalid-mime". A text
// result gets neither attribute.
//
// The operation, tool name and type are given at start, so samplers see
// them; the rest is set only when the span is recording.
//
// The status is Error only for a failure: outcomes failed and timed_out.
// A refusal (refused), a permission denial (not_permitted), a reviewer's no
// (denied) and a guardrail's block (blocked) are answers, a call waiting
// for a person (pending) is a pause, and a cancellation is the caller's
// decision, not a fault of the tool:
// their status stays Unset, while error.type and the outcome still tell
// them apart. The status description is the code, never the message.
//
// No error message reaches a span: the layer never calls RecordError, never
// reads Error() or a message, and sets only kinds, codes and outcomes, which
// are identifiers. (The GenAI conventions' exception event is therefore not
// emitted.) The tool's description, arguments and result are not recorded
// either.
//
// # Attempts
//
// [NewAttempts] is a second middleware, meant to sit just inside the retry
// layer. It adds one span event "toolmw.attempt" per attempt to the call's
// span, with toolmw.attempt (its number), toolmw.outcome and, on error,
// error.type, toolmw.error.kind and toolmw.retryable. Events rather than
// child spans: attempts are sequential parts of one call, and an event is
// far cheaper than a span.
//
// # Metrics
//
//	gen_ai.execute_tool.duration  histogram, s         gen_ai.operation.name, gen_ai.tool.name, toolmw.outcome, error.type
//	toolmw.tool.calls             counter, {call}      the same attributes
//	toolmw.tool.attempts          counter, {attempt}   the same attributes, per attempt (recorded by Attempts)
//
// The duration histogram bears the name the GenAI conventions give the
// duration of tool execution, so dashboards built on them find it; its
// bucket boundaries are those the conventions advise for GenAI operation
// durations (10 ms doubling up to about 80 s). The conventions define no
// count of tool calls, so the counters are in toolmw's namespace, named as
// the general conventions name counts of discrete things: a plural noun
// with a {curly} annotation for a unit. The histogram already counts calls;
// the call counter is there for backends that keep counters more cheaply
// than histograms, and attempts over calls measures retry amplification.
// error.type is set on every call that returned an error (refusals
// included), so a code can be followed whatever its outcome;
// toolmw.outcome tells failures from answers. Attribute values are a
// tool's name, outcomes and codes only, from a bounded vocabulary: the
// codes of the taxonomy's catalogue, those declared with taxonomy.Declare
// (at most taxonomy.MaxDeclared; the mapper's verdicts declare theirs) and
// those given to [WithCodes] are written as they are, every other code as
// [OtherCode] ("_OTHER", the conventions' value for an error.type outside
// a known set). So a stream of distinct codes (made up by a dependency, or
// carrying data) can neither grow the metric series without bound nor put
// data into a span. Declare the codes your tools make once, where you name
// them:
//
//	var codeNotCancellable = taxonomy.Declare("booking_not_cancellable")
//
// # Cost
//
// Attributes are built only for a recording span, and the success path
// reuses per-tool precomputed span options and metric attribute sets. With
// the no-op providers of the otel noop packages the middleware returns the
// tool unchanged; with the global providers and no SDK installed, a call
// costs a span start on the no-op tracer and nothing else.
//
// A panic passing through the layer is recorded as
// tool-failed/tool_panicked (without the panic value) and goes on.
package tracing
