// Package approval pauses a tool call for a person's decision: the calls a
// [Policy] names run only with a reviewer's approval for exactly their
// arguments, used once.
//
//	desk := approval.NewDesk(approval.WithStore(store), approval.WithKey(key))
//	tool := toolmw.MustWrap(spec, cancelBooking, desk.Middleware(approval.Tools("cancel_booking")))
//
// # What a call ends in
//
// A call the policy names, arriving without a decision, ends at once as
// approval-pending/approval_pending and the tool does not run. Its error
// carries a [taxonomy.ApprovalInfo]: the approval id and a summary a
// reviewer can read (the tool's name and its arguments in canonical JSON,
// scrubbed by package scrub, then held to taxonomy.MaxApprovalSummary
// bytes). The loop pauses the call, a reviewer reads the request
// ([Desk.Get]) and decides it ([Desk.Approve] or [Desk.Deny]), and the loop
// makes the same call again (docs/loops.md shows the cycle). Then:
//
//   - approved, same arguments, not expired: the approval is used (the
//     store's Consume of its nonce succeeds for exactly one caller in every
//     process sharing the store) and the tool runs, once;
//   - approved, but another caller used it first (a second replica racing
//     for the same call, a row written back after its use):
//     tool-not-permitted/approval_replayed; the tool does not run;
//   - approved, expired unused: approval-pending/approval_expired, with a
//     new pending request under the same id;
//   - other arguments than the ones decided: approval-pending/
//     approval_pending, a new request for these arguments (an approval or
//     a denial holds for the digest of the canonical arguments it was given
//     for: the same JSON however spaced or ordered);
//   - denied: approval-denied/approval_denied, an answer for the model,
//     never retried;
//   - the stored row fails its check: tool-not-permitted/
//     approval_store_corrupt (see below); the store fails or does not answer
//     within [WithStoreTimeout]: tool-failed/approval_store_failed,
//     transient. Both fail closed: the tool does not run. The caller's own
//     cancellation passes through as context.Canceled, its deadline as
//     tool-timeout/deadline_exceeded.
//
// No error carries data in its message: the messages are fixed sentences,
// and the only data (the id, a safe token, and the scrubbed summary) is in
// the ApprovalInfo, which telemetry does not print.
//
// # The approval id
//
// A request's id is "apr_" and 32 hex digits of a hash of the tool and the
// call's idempotency key (toolmw.Call.Key): the same for the same run, tool
// and model call id, in every process when the run has an id
// (budget.WithID), so a loop restarted between the question and the
// answer makes the same call and finds its request. A loop that keeps its
// own keys (toolmw.WithIdempotencyKey) keys its requests with them. A call
// without a model call id or a key of the loop's has a key made at random,
// so each time it is made it files a new request that nothing can approve:
// give gated calls their ids. A tool not made by toolmw.Wrap has no call at
// all: every such call shares one request.
//
// # Tamper evidence
//
// The [Store] holds opaque rows; the Desk seals every row it writes with
// HMAC-SHA256 under the key of [WithKey] over every field (the id, the
// tool, the argument digest, the decision, its expiry, the nonce, the
// summary, the creation time and the key of the call that used it) and
// checks every row it reads. A flipped byte, a row sealed with another key
// and a row copied from another request's id all fail the check and end the
// call as approval_store_corrupt; a decision already used (its nonce
// consumed) ends as approval_replayed. None of them ever approves.
//
// # Where to put it
//
// Put the layer outside retry and hedge: an approval allows one execution,
// so inside them a second attempt would find its approval used. It makes
// the idempotency key of the calls it gates; calls the policy does not name
// pass through with only the policy's cost.
//
// # Bounds
//
// Ids are at most [MaxIDLen] bytes, nonces [MaxNonceLen], rows
// [MaxRowBytes] (a longer row read from a store is corrupt); an approval
// stands at most [MaxTTL]; a [MemoryStore] keeps at most [MemoryMaxRows]
// rows, [MemoryMaxBytes] bytes of them and [MemoryMaxNonces] used nonces.
// Stores are checked by package approvaltest.
package approval
