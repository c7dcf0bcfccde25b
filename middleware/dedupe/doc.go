// Package dedupe provides the exactly-once layer: within one agent run, a
// call that repeats one already made gets the recorded outcome back, and
// the tool is not run again.
//
//	ctx = budget.WithRun(ctx)                        // the run the records live with
//	ctx = toolmw.WithCallID(ctx, "call_a1B2")        // the model's call id
//	tool := toolmw.MustWrap(spec, fn, dedupe.New())
//
// Models re-issue calls: the same call id sent twice, or the same
// side-effecting call made again in a later turn. For a tool that books,
// pays or cancels, this layer turns "executed twice" into "executed once,
// answered twice".
//
// # What is a repeat
//
// Two calls of one tool in one run are the same call when they carry the
// same call id ([toolmw.WithCallID]), compared as the model sent it (by
// [toolmw.Call.IDSum]), not as [toolmw.SafeCallID] shows it: an id that
// reads like the replaced form of another is an id of its own, and no id
// reaches another's record. A call with the id of an earlier call but
// other arguments (compared as JSON values, like WithArguments does; as
// bytes when they have no canonical form) is not its repeat: the model
// re-used the id for another request, and the first call's outcome would
// report that request as done. It is refused as
// tool-not-permitted/call_id_reused, nothing runs, and the earlier call's
// record stands, for its own repeats. For the tools named in [WithArguments], two
// calls are also the same when their arguments are the same JSON value
// (object keys in any order, any spacing, one escaping of strings; numbers
// as written), whatever their call ids. Arguments of such a tool that have
// no one canonical form — not one valid JSON value, two keys of an object
// alike (also when they differ only in case, which encoding/json matches
// as one field), a lone surrogate escape, nesting deeper than 64 — are
// refused as tool-args-invalid (field error type json_ambiguous) and the
// tool does not run: spelt another way, the same payment could pass for a
// new call, or another call for a repeat. A call without a run in its
// context ([budget.WithRun]), or without a call id (for a tool not named
// in WithArguments), passes through untouched: there is nothing to be
// exactly-once within.
//
// # What a repeat gets
//
// A repeat that arrives while the first call is in flight waits for it (or
// for its own context) and gets its outcome. A repeat that arrives later
// gets the recorded outcome at once: the same result, or an equivalent
// error — its [taxonomy.Info] form, as [taxonomy.Info.Err] makes it: the
// same kind, code, tool, retryability, finality, retry-after, message,
// field errors, approval, spend and guardrail records, matched by
// errors.Is and errors.As as the first (an untyped error is
// tool-failed/unmapped_failure, as InfoOf reads it). Its cause is not
// kept, and its message and field errors are bounded (see Memory).
// Outcomes that say the tool did not act, or that acting again is safe, are
// not recorded, so the next repeat runs the tool:
//
//   - every failure of an idempotent call (toolmw.Call.Idempotent: the
//     tool declares itself Idempotent, or honours idempotency keys, so a
//     repeat carries the same key);
//   - an error that says nothing ran or nothing landed, by
//     taxonomy.EffectOf (circuit-open, rate-limited, a run, call or spend
//     limit, tool-not-permitted, an approval decision, bad arguments; a
//     typed error its maker made retryable, other than a timeout or a
//     cancellation).
//
// An unknown outcome of a non-idempotent call — it timed out, its caller's
// deadline passed or it was cancelled while the tool ran, whatever the
// error says of retrying — is in doubt: the tool may have acted. The
// caller gets its error; a later repeat (or one waiting meanwhile) gets
// tool-failed/duplicate_in_doubt, permanent, without the tool running. A
// panic is recorded as tool-failed/tool_panicked and re-raised.
//
// # Memory
//
// The records live with the run: they hang off the context's *budget.Run
// and are dropped when the Run is garbage collected, so they end with the
// run without the loop saying so. Per run and per layer they are bounded
// in bytes: at most [WithMaxRecords] finished records ([DefaultMaxRecords],
// 1024; each a tool name, two 32-byte hashes, about 150 bytes and, for a
// failure, its kind, code, tool, approval id and guardrail name, at most
// 400 bytes), the oldest dropped first — a repeat of a call that old runs
// again — and at most [WithMaxBytes] ([DefaultMaxBytes], 1 MiB) of results
// (their content and parts, toolmw.Result.Size) and error text together.
// A result is held as a copy of its parts, and each repeat gets a copy of
// its own, so no caller can change what another is given. An error is recorded without its cause,
// its message scrubbed and cut to [MaxErrorMessage] (1 KiB), its field
// errors kept in order up to [MaxErrorFields] (20) and [MaxErrorBytes]
// (4 KiB) of text with the message. Past WithMaxBytes a record keeps who
// was called but not what came back: a repeat of a success gets
// tool-failed/duplicate_result_dropped, permanent, without the tool
// running, and a repeat of a failure gets its error without message,
// field errors or approval summary (its kind, code and the rest still
// tell the loop what happened). So a run's records hold at most about
// 1 MiB + 1024 × 0.5 KiB with the defaults, whatever the tool returns.
// Calls in flight hold a record each on top of the bound.
//
// # Across processes
//
// The records above live in one process and die with it. With [WithStore],
// the records of a named run (budget.WithID) live in a [Store] —
// adapters/redisstate on Redis, adapters/sqlstore on SQLite or PostgreSQL
// — so a call is made once across crashes, restarts and every replica
// serving the run. A call claims its record before the tool runs: the
// record is started, held by the call with a lease ([WithLease],
// [DefaultLease]) that it renews every third of the lease while the tool
// runs, and finished with the outcome after, kept for [WithWindow]
// ([DefaultWindow], a day) after its last write. What is recorded, and what
// a repeat gets, are as above (an error in its bounded Info form, a
// result of at most [MaxOutcome] bytes encoded, or dropped). A repeat, in
// any process:
//
//   - of a done call gets its recorded outcome;
//   - of a call whose holder lives (it renews its lease) waits, asking the
//     Store again after 10 ms, then twice as long each time up to a
//     second, until the holder finishes or its own context ends (its
//     error then);
//   - of a call whose holder's lease ended — it died, or lost the Store,
//     after the tool may have run — gets tool-failed/duplicate_in_doubt,
//     and the tool does not run; unless the call is idempotent
//     (toolmw.Call.Idempotent: Spec.Idempotent or Spec.HonoursKeys), which
//     takes the record over and runs the tool again.
//
// So a process killed after its tool ran and before the answer reached the
// loop leaves a record that tells the resumed run what happened, or that
// the call may have run: never a second execution of a call that is not
// idempotent.
//
// The Store is asked through the guard every store port has (see package
// store): each operation bounded by store.WithTimeout and the call's own
// deadline, a failure reported to store.WithOnError and the Store left
// alone for store.Rest. When it cannot be asked, a call that is not
// idempotent fails closed: tool-failed/call_record_unavailable, retryable,
// and the tool does not run (reported with Refused set) — running it
// unrecorded could make it twice. An idempotent call runs on the
// in-process records, marked degraded (toolmw.Call.Degraded is "dedupe").
// A record that does not parse (store.ErrCorrupt, or an outcome this
// layer did not write) ends the call as tool-failed/call_record_corrupt,
// permanent, without running the tool: it may hide a call that ran. An
// outcome, or a release, the Store could not take when the call ended is
// tried again in the background (store.GiveUp); until it lands, a repeat
// waits for the lease and then learns the outcome is unknown. A claim
// whose answer never arrived is released the same way; should the release
// come before the claim lands, a repeat waits for its lease and is told
// the call may have run although it did not — the error is on the safe
// side.
//
// A Store is trusted with what it holds unless the layer has a seal key
// ([WithSealKey]): then every outcome it writes is sealed with an
// HMAC-SHA256 over the run, the record's name, the arguments' digest and
// the outcome, and every one it reads must carry that seal, so that whoever
// can write to the Store cannot answer a call with a result of their own,
// nor copy one call's outcome to another (call_record_corrupt). A Store can
// still withhold or delete records — a repeat then runs the tool, as after
// the window — or hold a started record nobody holds, which a repeat waits
// for until its lease ends and then takes for in doubt.
//
// A repeat is found by the record's name in the Store: 64 hex digits of a
// hash of the tool's name and the call id's hash (or of the canonical
// arguments, for a tool in WithArguments), under the run id; the digest of
// the arguments is kept with it, so a call id re-used with other
// arguments is refused as above. Leases are compared on the layer's clock
// ([WithClock]) with the times it wrote, so replicas whose clocks differ
// by much less than a lease agree on it.
//
// # Where it sits
//
// Outside retry, so it records a call's final outcome once, not an
// attempt's; inside the observers, so a repeat is still traced, logged and
// reported as a call:
//
//	stack, err := middleware.Default().InsertBefore(middleware.Retry,
//		middleware.Layer{Name: middleware.Dedupe, Middleware: dedupe.New()})
//
// It is not in middleware.Default: it needs the loop's run and call ids,
// and a loop that deliberately re-issues a call id (to re-read a changing
// value) would be surprised by a recorded answer.
//
// # Configuration
//
// Zero and nil values are the defaults. A negative bound, a name in
// WithArguments that is not a valid tool name, a lease shorter than
// [MinLease], a window shorter than twice the lease, a seal key shorter
// than [MinKeyLen] or an invalid store option makes New return a
// [toolmw.Reject] middleware: toolmw.Wrap reports the
// tool-definition-invalid/option_invalid error at start-up, as [Validate]
// does.
//
// # Concurrency
//
// The Middleware, the Tools it makes, an [Option] and [Validate] are safe
// for concurrent use. No lock is held across a tool call. With a Store, a
// call holding a record has one goroutine renewing its lease while the
// tool runs; it ends before the call returns.
package dedupe
