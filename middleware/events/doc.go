// Package events emits a run event for every tool call that returns an
// error, for an agent's run log, a UI or an audit trail.
//
// # Events
//
// [New] (or [Emitter.Middleware]) emits one [Event] of type "tool_error"
// per call that returns an error: the tool, the model's call id, the
// outcome, the taxonomy kind and code, whether it is retryable and after
// how long, the attempts made (read from the toolmw.Call once the call
// returned), the time, and Told: toolmw.ForModel(res, err), exactly what
// the model was told.
//
// Every error emits, refusals and cancellations included: a run's history
// should show that the tool said no, and that a call was cut short. The
// Outcome field (failed, refused, not_permitted, timed_out, cancelled,
// pending, denied, blocked) lets a sink keep only what it wants; a call
// waiting for a person's approval (pending) or denied by one (denied)
// carries the approval request's id in ApprovalID, and a call that a layer
// decided on its local state because its shared store failed names that
// layer in Degraded. A successful call emits nothing and costs nothing
// beyond the call.
//
// An event carries no error text beyond Told, and Told shows only what
// ForModel shows: a typed error's own message (which the redact layer
// scrubs) and never the text of an untyped error or of a cause.
//
// An event never carries a result's parts: a success emits nothing, and for
// a failure the model is told the error, not whatever result the tool
// returned with it (ForModel shows no result beside an error), so neither
// is Told. Nothing of a part's text, JSON, name, URI or bytes reaches an
// event; the tracing and logging layers describe a successful result's
// parts by kind, MIME type and size.
//
// # Delivery
//
// A sink that panics or blocks must not break or stall a call. An
// [Emitter] therefore queues events in a bounded queue (256 by default,
// [WithQueueSize]) and delivers them from one goroutine, in order, one at a
// time, never under a lock of its own:
//
//   - a sink that panics is recovered; the panic is counted in
//     [Stats].Panicked and delivery goes on with the next event;
//   - a sink that blocks holds up delivery; the queue fills and further
//     events are dropped and counted in [Stats].Dropped, while calls go on
//     untouched. Delivery resumes when the sink returns.
//
// The delivering goroutine starts when an event arrives and exits as soon
// as the queue is empty, so an idle Emitter holds no goroutine and needs no
// Close. [Emitter.Flush] waits, within a context, until every queued event
// has been delivered: call it at shutdown. Use [NewEmitter] rather than
// [New] to keep the handle for Flush and [Emitter.Stats].
//
// A panic passing through the layer emits a tool-failed/tool_panicked event
// (without the panic value) and goes on.
package events
