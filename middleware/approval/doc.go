// Package approval pauses a tool call for a person's decision: the calls a
// [Gate] names run only with a reviewer's approval for exactly their
// arguments, used once.
//
//	desk := approval.NewDesk(approval.WithStore(shared, store.WithOnError(report)), approval.WithSealKey(key))
//	tool := toolmw.MustWrap(spec, cancelBooking, desk.Middleware(approval.Tools("cancel_booking")))
//
// # What a call ends in
//
// A call the gate names, arriving without a decision, ends at once as
// approval-pending/approval_pending and the tool does not run. Its error
// carries a [taxonomy.ApprovalInfo]: the approval id and a summary a
// reviewer can read (the tool's name and its arguments in canonical JSON,
// scrubbed by package scrub, with every character that could pass for
// another written as a \u escape — a Cyrillic а in Latin text, a
// zero-width space, a bidi override — then held to
// taxonomy.MaxApprovalSummary bytes). The loop pauses the call, a reviewer
// reads the request ([Desk.Get]) and decides it ([Desk.Approve] or
// [Desk.Deny]), and the loop makes the same call again (docs/loops.md
// shows the cycle). Then:
//
//   - approved, same arguments, not expired: the approval is used (the
//     store's Consume of its nonce succeeds for exactly one caller in every
//     process sharing the store) and the tool runs, once;
//   - approved, but another caller used it first (a second replica racing
//     for the same call, a row written back after its use):
//     tool-not-permitted/approval_replayed; the tool does not run;
//   - approved, expired unused: approval-pending/approval_expired, with a
//     new pending request under the same id;
//   - denied: approval-denied/approval_denied, an answer for the model,
//     never retried. A denial is final: nothing the model sends, no
//     Approve and no expiry replaces it;
//   - the same call id with other arguments than its request's (another
//     value, a member more, the same members in an order that decodes
//     differently): tool-not-permitted/approval_args_changed, and the
//     request stands as it was, pending, approved or denied. A request
//     holds for the digest of the canonical arguments it was filed for
//     (the same JSON however spaced or ordered; arguments without a
//     canonical form, such as duplicate keys or keys equal under case
//     folding, by their exact bytes), so an approval covers exactly what
//     the tool will receive, a denial is never forgotten because other
//     arguments came in between, and two callers sharing a call id cannot
//     keep displacing each other's request;
//   - no run to bind the call to (see below), or a tool not made by
//     toolmw.Wrap: tool-not-permitted/approval_unbound; nothing is filed;
//   - the stored row fails its check: tool-not-permitted/
//     approval_store_corrupt (see below); the store fails, panics or does
//     not answer within its timeout (store.WithTimeout, default
//     store.DefaultTimeout), or rests after such a failure (see below):
//     tool-failed/approval_store_failed, transient, reported to
//     store.WithOnError as a store.Error of Layer "approval", Refused.
//     Both fail closed: the tool does not run. The caller's own
//     cancellation passes through as context.Canceled, its deadline as
//     tool-timeout/deadline_exceeded. When it was the use of the approval
//     that got no answer, the approval is not lost (see below): the same
//     call made again runs, once.
//
// No error carries data in its message: the messages are fixed sentences,
// and the only data (the id, a safe token, and the scrubbed summary) is in
// the ApprovalInfo, which telemetry does not print.
//
// # The approval id, and the run
//
// A request's id is "apr_" and 32 hex digits of a hash of the tool and the
// call's idempotency key (toolmw.Call.Key), which is derived from the run,
// the tool and the model's call id: the same for the same run, tool and
// call id, in every process when the run has an id (budget.WithID), so a
// loop restarted between the question and the answer makes the same call
// and finds its request; and different in another run, so a conversation
// never finds another's request. A loop that keeps its own keys
// (toolmw.WithIdempotencyKey) keys its requests with them: make them
// unique across runs. A call without a model call id or a key of the
// loop's has a key made at random, so each time it is made it files a new
// request that nothing can approve: give gated calls their ids.
//
// A gated call needs a run (budget.WithRun). Without one its key could be
// bound only to the process, so every conversation of the process making a
// call with the same id would share one request, and one could run on
// another's approval: such a call ends as approval_unbound, unless the
// Desk is made [WithRunOptional], the explicit choice of a process that
// serves one conversation at a time or whose call ids are unique. A tool
// not made by toolmw.Wrap has no call record at all and is always unbound.
//
// # Tamper evidence, and what a store can do
//
// The [Store] holds opaque rows; the Desk seals every row it writes with
// HMAC-SHA256 under the key of [WithSealKey] over every field (the id, the
// tool, the argument digest, the decision, its expiry, the nonce, the
// summary, the creation time and the key of the call that used it) and
// checks every row it reads. A flipped byte, a row sealed with another key
// and a row copied from another request's id all fail the check and end the
// call as approval_store_corrupt; a decision already used (its nonce
// consumed) ends as approval_replayed. None of them ever approves.
//
// Decisions only move forward. Every row the Desk writes has a new nonce
// and replaces exactly the row it read (Save is a compare-and-swap on the
// whole row); a reviewer's decision applies only to the request as read
// (its digest, nonce and state, else [ErrChanged]); a denial and a used
// approval are final. An approval that stops being the request's decision
// has its nonce spent in the store's consumed set before the row that
// replaces it is written: when it is used, when a reviewer denies it
// (exactly one of the revocation and a racing use wins) and when an
// expired one is replaced by a new request. So a copy of any approval that
// is no longer current, written back into the store later, is refused as
// approval_replayed, on every store (package approvaltest checks it).
//
// What a party with write access to the store but not the key can do:
// make calls fail closed (corrupt, delete or withhold rows and nonces);
// delete a request or roll its row back to an earlier pending one, so the
// call asks again and a reviewer must decide it again (a denial can be
// made to ask again this way, never to run; an approval rolled back to its
// pending request and approved again is two approvals, each allowing one
// execution, as the reviewer decided twice); and, by also removing entries
// from the consumed set, restore an approval that was used, revoked or
// replaced, and run it again. That last one is a full rollback of the
// store: without a counter kept outside the store, nothing can tell it from
// the store's real history, and it cannot be detected. What it cannot do:
// approve anything, change what an approval covers, move a decision to
// another request, or reuse a decision whose nonce is spent while the
// consumed set holds it. A party with the key can do anything the Desk
// can: keep it secret. The same holds for the Desk's clock: an approval
// stands until its expiry by the clock of the replica reading it.
//
// # A use whose answer never arrived
//
// A store that answers late (a Redis busy or failing over, a database
// under a lock) may apply the Consume that uses an approval after the
// layer gave up on it. The call has failed closed and the tool did not
// run; counting the approval as used would lose it (every later call
// approval_replayed, and Approve finds the request decided), and counting
// it as unused would let the late Consume spend it anyway. So each Consume
// carries an operation id, new for each attempt, and when the layer does
// not learn its outcome it asks the store to cancel that operation
// ([Store.Cancel], bounded by the store timeout but not by the caller's
// context, and tried at once even though the failure rests the store): in
// one atomic step the approval is freed if that operation
// took it, and the operation can never take it later. The same call made
// again then runs exactly once. Only a use that did not run is cancelled:
// a Consume that returned nil ran its tool and is never undone, and a
// revocation ([Desk.Deny]) is never cancelled, so a revoked approval stays
// revoked. The replacement of an expired approval is cancelled in the same
// way, before anything replaced it, so the request is renewed by the next
// call rather than stuck. When the Cancel fails too, it is reported to
// store.WithOnError (op "cancel") and tried again in the background after
// each rest of the store, for up to store.GiveUp (at most store.MaxPending
// wait; one given up is reported with store.ErrDropped). Until it lands
// the approval may stay spent: its call ends as approval_replayed, which
// fails closed.
//
// # When the store fails
//
// The Desk treats its store as every layer with a store does (package
// store), failing closed: each operation ("load", "save", "consume",
// "cancel") is bounded by store.WithTimeout and by the caller's own
// deadline. A store that fails, panics ([ErrStorePanicked]) or does not
// answer in time is reported to store.WithOnError, once per operation, and
// left alone for store.Rest: meanwhile every gated call fails closed at
// once (approval_store_failed, nothing runs, reported with
// store.ErrResting), and the reviewer's side returns an error matching
// store.ErrResting, without asking the store; only the Cancel of a use
// whose answer never came is still tried (see above). Not reported, and
// not resting the store: the caller's own context ending first (except
// for a "cancel", which does not depend on it), and the outcomes a Store
// reports by design ([ErrNotFound], [ErrConflict], [ErrConsumed],
// [ErrCanceled]). A row that fails its check is not the store's failure:
// approval_store_corrupt, and the store does not rest. The reviewer's side
// ([Desk.Get], [Desk.Approve], [Desk.Deny]) returns the store's error to
// its caller, wrapped.
//
// # Listing, and who decided
//
// [Desk.List] returns a page of the stored requests, by state and after a
// cursor, each checked as Get checks it: a row that fails its check is
// counted ([Page.Skipped]) and never listed. It needs a store that
// implements the optional [Lister] port (the MemoryStore,
// adapters/redisstate and adapters/sqlstore do). [Desk.ApproveBy] and
// [Desk.DenyBy] record a [Review] — the reviewer's identity and their
// reason, scrubbed — in the sealed row with the decision, as the row
// records who asked ([Request.Asker]: the run's id, scrubbed); a row that
// says neither is written as before. [WithOnVerdict] reports each decision
// once stored. Package console serves a page over them.
//
// # Metrics
//
// A Desk publishes, per tool, in package state (read by middleware/tracing's
// RegisterStateMetrics): the requests pending (toolmw.approval.pending);
// the verdicts (toolmw.approval.verdicts): approved and denied, for a
// pending request decided, revoked, for an approval denied before its
// use, and expired, for an approval that lapsed unused, counted when its
// call comes again and files a new request (one whose call never comes
// again is never seen); and the time to a decision
// (toolmw.approval.wait): the seconds from a request's filing to its
// approval or denial, summed per verdict, so that wait over the verdicts
// of one verdict is the mean time to it (observable instruments cannot be
// histograms; the sum and the count can be read as rates over any
// window). The time is measured from the filing replica's clock to the
// deciding one's; a negative gap counts as none.
//
// The Desks sharing one [MemoryStore] count together: a request filed by
// one and decided by another moves one count, so pending is exact for
// them (but for a row the bounded store dropped, which stays counted as
// pending). A Desk with another store counts what it did itself: the
// requests it filed up, those it decided down. Over the processes sharing
// the store, and the Desks of one process (their series are summed), the
// counts add up to the store's while those Desks live; a Desk that is
// gone, or a process restarted, takes its share with it. Give each
// process one long-lived Desk per store.
//
// # Where to put it
//
// Put the layer outside retry and hedge: an approval allows one execution,
// so inside them a second attempt would find its approval used. If a hedge
// layer sits inside this one anyway, it does not fan out an approved call
// (the layer marks it single-execution, as runlimit and spend mark the
// calls they admit), while a retry inside it may still make a second
// attempt after a failure that says nothing landed.
// It makes the idempotency key of the calls it gates; calls the gate does
// not name pass through with only the gate's cost.
//
// # Bounds
//
// Ids are at most [MaxIDLen] bytes, nonces [MaxNonceLen], operation ids
// [MaxOpLen], rows [MaxRowBytes] (a longer row read from a store is
// corrupt); an approval stands at most [MaxTTL]; a [MemoryStore] keeps at
// most [MemoryMaxRows] rows, [MemoryMaxBytes] bytes of them,
// [MemoryMaxNonces] used nonces and [MemoryMaxCancelled] cancelled
// operations ([MemoryMaxCancels] of one nonce).
// A row dropped by a bounded or expiring store (a MemoryStore's oldest,
// Redis's expiry, the SQL store's Prune) is a request deleted: its call
// asks again. Stores are checked by package approvaltest.
package approval
