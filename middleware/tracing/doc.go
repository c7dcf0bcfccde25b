// Package tracing traces tool calls with OpenTelemetry and records their
// duration and outcome as metrics, following the OpenTelemetry GenAI
// semantic conventions for tool execution (the execute_tool span and the
// gen_ai.execute_tool.duration metric, now in
// open-telemetry/semantic-conventions-genai) and the general conventions'
// Recording Errors.
//
// It is the only toolmw package that imports the OpenTelemetry API; the SDK
// is used only in its tests and examples. Pass providers with
// [WithTracerProvider] and [WithMeterProvider]; by default the global ones
// are used, looked up when the middleware wraps a tool. The tracer and the
// meter have the scope [ScopeName], the version of the toolmw module in
// the binary's build information, and the schema URL [SchemaURL].
//
// # Spans
//
// [New] starts one span per call, of kind Internal, named
// "execute_tool {tool}", with the attributes of the conventions:
//
//	gen_ai.operation.name      "execute_tool"
//	gen_ai.tool.name           the tool's name: the Call's, else WithToolName's, else "unknown"
//	gen_ai.tool.type           Spec.Type ("function" unless the spec says otherwise), when known
//	gen_ai.tool.description    Spec.Description, scrubbed, at most 1 KiB; not with WithoutDescription
//	gen_ai.agent.name          ContextWithAgent's or WithAgentName's name, when given
//	gen_ai.tool.call.id        the model's call id (toolmw.WithCallID), when known
//	gen_ai.tool.call.arguments only with WithContent: the arguments, scrubbed, cut
//	gen_ai.tool.call.result    only with WithContent, after a success: the result's text, scrubbed, cut
//	error.type                 the code, when the call ended in an error (see below)
//
// and toolmw's own attributes, under the toolmw namespace:
//
//	toolmw.outcome         ok, failed, refused (tool-refused), not_permitted (tool-not-permitted), timed_out, cancelled,
//	                       pending (approval-pending), denied (approval-denied), blocked (guardrail-blocked)
//	toolmw.attempts        the attempts made, read from the Call once the call returned
//	toolmw.fallback        what stood in for the result (toolmw.SetFallback: last_good, function), when something did
//	toolmw.degraded        the layer that decided on local state because its shared store failed (toolmw.SetDegraded)
//	toolmw.cache           what a cache layer found (toolmw.SetCache: hit, miss, bypass), when one looked
//	toolmw.chaos           what a chaos layer injected (toolmw.SetChaos: failure, latency, timeout, …), when it did
//	toolmw.error.kind      the taxonomy kind, whenever the call returned an error
//	toolmw.error.code      the taxonomy code, whenever the call returned an error
//	toolmw.retryable       whether the error is retryable, whenever the call returned an error
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
// The operation, tool name, type, description and agent are given at
// start, so samplers see them; the rest is set only when the span is
// recording. One clock reading starts the span and the measured duration,
// one ends both — the OpenTelemetry Go SDK's own readings, or those of the
// clock given to [WithClock] —: the histogram's value is the span's
// duration, as the conventions ask.
//
// # Errors and handled outcomes
//
// The conventions' rule (Recording Errors): an operation that ended in an
// error gets error.type and the span status Error; one that ended without
// an error gets neither, and errors that were retried or handled are not
// recorded on the span or the metrics of the operation. toolmw decides per
// outcome ([IsError]):
//
//	outcome        error.type  status  why
//	ok             no          Unset   the tool returned a result
//	failed         yes         Error   the call did not do its work (a dependency fault, bad arguments, an open breaker, a panic …)
//	timed_out      yes         Error   the call ran out of time
//	refused        no          Unset   an answer: the tool said no (booking_not_cancellable)
//	not_permitted  no          Unset   an answer: a policy denied the call, as designed
//	denied         no          Unset   an answer: a reviewer said no
//	blocked        no          Unset   an answer: a guardrail stopped the content, as designed
//	pending        no          Unset   a pause: the call waits for a person and will be resumed
//	cancelled      no          Unset   the caller's decision, not a fault of the tool
//
// So status-based error rates (status=error) and the metric-based rate
// (calls with error.type) count the same calls. A handled outcome keeps
// toolmw.outcome and toolmw.error.kind, toolmw.error.code and
// toolmw.retryable, on the span and (the outcome and the code) on the
// metrics, so answers can still be counted by code. The status
// description stays empty: error.type holds the code, and no message is
// read. error.type takes its values from the bounded vocabulary below:
// the taxonomy's catalogue (docs/errors.md lists it), the declared codes
// and [OtherCode].
//
// No error message reaches a span: the layer never calls RecordError, never
// reads Error() or a message, and sets only kinds, codes and outcomes,
// which are identifiers.
//
// # Events
//
// A call that panicked — a panic passing through the layer, or the
// recovery layer's tool-failed/tool_panicked — gets the span event
// "exception" with exception.type "panic" only ([ExceptionPanic]): the
// panic value, and so its type, is never read. A returned error gets no
// exception event (Recording Errors advises against one).
//
// A call that toolmw's guardrail layer blocked (guardrail-blocked, with
// the guardrail's name in its record) gets the span event
// "gen_ai.guardrail.result" of the GenAI guardrail conventions:
//
//	gen_ai.guardrail.component.name  "toolmw guardrail"
//	gen_ai.guardrail.policy.id       the guardrail's name (no_card_numbers), a code
//	gen_ai.guardrail.source          "args" or "result": the stage that blocked (guardrail.Stage)
//	gen_ai.guardrail.result.type     "outcome"
//	gen_ai.guardrail.result.value    "blocked"
//
// These are the guardrail layer's own words, not a verdict inferred from a
// score. A guardrail that lets a call through reports nothing, so there is
// no event for it. The event is a span event, as the GenAI events were
// before OpenTelemetry's event API: the layer imports no log API.
//
// # Content
//
// The arguments and results are the conventions' opt-in attributes: off
// by default. [WithContent] records them, each scrubbed whole (secrets and
// identifiers the scrubber knows become [REDACTED:family]; [WithScrubber],
// scrub.Default() by default), then cut to at most its bound in bytes
// (4 KiB by default, from 16 bytes to 64 KiB), at a character boundary,
// ending in "…". gen_ai.tool.call.arguments is the arguments' JSON text
// (the conventions allow a JSON string where attributes cannot be
// structured, as in Go); gen_ai.tool.call.result, set only after a
// success, is the result's Content and then the text of each of its parts
// that has text, one per line (binary parts, names and URIs are left to
// toolmw.result.part_descriptions). Scrubbing reads the whole content, in
// time linear in its size, before the cut: a secret straddling the cut is
// still found.
//
// gen_ai.tool.description is recommended by the conventions and set by
// default, scrubbed and cut to [MaxDescriptionBytes] (1 KiB), once per
// tool; [WithoutDescription] leaves it off.
//
// # Attempts
//
// [NewAttempts] is a second middleware, meant to sit just inside the retry
// layer. It adds one span event "toolmw.attempt" per attempt to the call's
// span, with toolmw.attempt (its number), toolmw.outcome and, on error,
// toolmw.error.code, toolmw.error.kind and toolmw.retryable — never
// error.type, which describes how the call ended: a call that recovered
// after failed attempts ended without an error. Events rather than child
// spans: attempts are sequential parts of one call, and an event is far
// cheaper than a span.
//
// # Metrics
//
//	gen_ai.execute_tool.duration  histogram, s         gen_ai.operation.name, gen_ai.tool.name, gen_ai.tool.type,
//	                                                   gen_ai.agent.name, toolmw.outcome, toolmw.error.code, error.type
//	toolmw.tool.calls             counter, {call}      the same attributes
//	toolmw.tool.attempts          counter, {attempt}   the same attributes, per attempt (recorded by Attempts)
//	toolmw.cache.lookups          counter, {lookup}    gen_ai.tool.name, toolmw.cache (hit, miss, bypass): calls a cache layer looked up
//
// The duration histogram bears the name the GenAI conventions give the
// duration of tool execution, so dashboards built on them find it; its
// bucket boundaries are those the conventions advise for it (10 ms
// doubling up to about 80 s). The conventions define no count of tool
// calls, so the counters are in toolmw's namespace, named as the general
// conventions name counts of discrete things: a plural noun with a
// {curly} annotation for a unit. The histogram already counts calls; the
// call counter is there for backends that keep counters more cheaply than
// histograms, and attempts over calls measures retry amplification.
// gen_ai.tool.type and gen_ai.agent.name are set when known;
// toolmw.error.code on every call that returned an error, and error.type
// as on the span: only when the outcome is an error. On the attempts
// counter the rule applies per attempt: a failed attempt of a call that
// then succeeded counts with error.type there, never on the histogram.
//
// Attribute values are a tool's name and type, an agent's name, outcomes
// and codes only, from a bounded vocabulary: the codes of the taxonomy's
// catalogue, those declared with taxonomy.Declare (at most
// taxonomy.MaxDeclared; the mapper's verdicts declare theirs) and those
// given to [WithCodes] are written as they are, every other code as
// [OtherCode] ("_OTHER", the conventions' value for an error.type outside
// a known set). So a stream of distinct codes (made up by a dependency, or
// carrying data) can neither grow the metric series without bound nor put
// data into a span. Declare the codes your tools make once, where you name
// them:
//
//	var codeNotCancellable = taxonomy.Declare("booking_not_cancellable")
//
// An agent name is the application's: give a bounded set of them. One
// that is not valid ([ValidAgentName]: printable, at most 64 bytes,
// nothing the scrubber finds) is written as [OtherCode].
//
// # State metrics
//
// [RegisterStateMetrics] reports the state the layers publish in package
// state, as observable instruments read when a reader collects (the call
// path pays only the atomic counters the layers keep): the only way the
// layers reach OpenTelemetry, since none of them imports it.
//
//	stop, err := tracing.RegisterStateMetrics(meterProvider, nil) // nil: state.Default
//
// Every series carries toolmw.name (the tool's name, the key of a keyed
// layer, _UNNAMED for a shared pool or limiter or an instance not yet
// called, _OTHER past the registry's bound) or, on the store instruments,
// toolmw.store.port; names are scrubbed. At most state.DefaultMaxSeries+1
// series per instrument (see package state).
//
//	toolmw.breaker.state          gauge          1            0 closed, 1 half-open, 2 open
//	toolmw.breaker.transitions    counter        {transition} + toolmw.breaker.state (the state entered)
//	toolmw.bulkhead.in_flight     updowncounter  {call}
//	toolmw.bulkhead.queued        updowncounter  {call}
//	toolmw.bulkhead.limit         updowncounter  {call}       moves in an adaptive pool
//	toolmw.bulkhead.refusals      counter        {call}
//	toolmw.ratelimit.wait         counter        s            time calls waited for a token
//	toolmw.ratelimit.refusals     counter        {call}
//	toolmw.retry_budget.tokens    gauge          {token}      the balance a tool's retries draw on
//	toolmw.retry_budget.refusals  counter        {retry}
//	toolmw.run_budget.used        updowncounter  {attempt}    summed over the live runs
//	toolmw.run_budget.refusals    counter        {attempt}
//	toolmw.hedge.started          counter        {hedge}
//	toolmw.hedge.won              counter        {hedge}
//	toolmw.store.errors           counter        {error}      + toolmw.store.operation
//	toolmw.store.degraded         counter        {call}       decided without the store (fail open)
//	toolmw.spend.reserved         updowncounter  {amount}     held by calls in flight; + toolmw.spend.currency
//	toolmw.spend.settled          counter        {amount}     + toolmw.spend.currency
//	toolmw.runlimit.refusals      counter        {call}
//	toolmw.approval.pending       updowncounter  {request}    waiting for a reviewer
//	toolmw.approval.verdicts      counter        {request}    + toolmw.approval.verdict (approved, denied, revoked, expired)
//	toolmw.approval.wait          counter        s            + toolmw.approval.verdict (approved, denied): time to a decision
//	toolmw.dedupe.repeats         counter        {call}       repeats given the recorded outcome
//	toolmw.cache.hits             counter        {call}
//	toolmw.cache.misses           counter        {call}
//	toolmw.fallback.served        counter        {call}       + toolmw.fallback.source (last_good, function)
//
// A counter is read from its layer instance: when a tool made per request
// is collected, its series ends. toolmw.spend.currency is present only on
// the series of a spend layer given a currency (spend.WithCurrency).
//
// Observable instruments cannot be histograms, so the time to an approval
// decision is two counters: toolmw.approval.wait sums the seconds pending
// requests waited until approved or denied, and toolmw.approval.verdicts
// counts them, so that wait over verdicts of one verdict, as rates over a
// window, is the mean time to that decision. A revocation (an approval
// denied before its use) and an expiry count as verdicts of their own and
// add no wait. toolmw.approval.pending is what the process's Desks know:
// exact for the Desks sharing one approval.MemoryStore; with a shared
// store, each process counts the requests it filed up and those it decided
// down, so the sum over processes is right while they run (see package
// approval).
//
// # Cost
//
// Attributes are built only for a recording span, and the success path
// reuses per-tool precomputed span options and metric attribute sets
// (recomputed when a call's agent differs from the last one's). With the
// no-op providers of the otel noop packages the middleware returns the
// tool unchanged; with the global providers and no SDK installed, a call
// costs a span start on the no-op tracer and nothing else. Content
// attributes cost a scrub of the arguments and the result per recorded
// call.
//
// A panic passing through the layer is recorded as
// tool-failed/tool_panicked (without the panic value) and goes on.
package tracing
