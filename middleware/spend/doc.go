// Package spend provides the spend layer: tools declare what a call costs,
// a run carries a spend limit, and a call that could take the run past its
// limit does not run.
//
//	ctx = spend.ContextWithLimit(ctx, 10.00) // this run may spend 10.00
//	mw := spend.New(
//		spend.Fixed("search", 0.01),                     // every call costs 0.01
//		spend.Metered("summarise", 0.50, costFromUsage), // read from the result, at most 0.50
//	)
//
// The unit is the application's: a currency, tokens, credits; the layer
// only adds. A call past the limit ends at once as
// budget-exceeded/spend_limit, not retryable: the tool does not run, and
// the error's [taxonomy.SpendInfo] (InfoOf(err).Spend) says the limit, what
// is spent and what is left; its message tells the model the call's cost
// and what is left.
//
// # The limit is never exceeded
//
// Before a call runs, the layer reserves its cost — the fixed cost, or the
// metered maximum — against the limit; after it, it settles the reservation
// to what the call cost. A call is admitted only when what is spent, plus
// what calls in flight hold, plus its own reservation fits the limit, so
// under any number of concurrent calls the run never spends more than its
// limit, even when every call in flight costs its maximum. The price is
// that a call may be refused while others hold more than they will use.
// Amounts are kept as whole billionths of a unit: sums are exact, a cost of
// 0.1 ten times is 1. A cost — fixed, a metered maximum, a metered read —
// is rounded up to the billionth, and a limit down, so rounding never lets
// a call run that the amounts as written would refuse: Fixed(4e-10) costs
// one billionth, not nothing, and under a limit of 0 no call of it runs.
// (An amount is read as its shortest decimal form, so one written with
// nine decimals or fewer is kept exactly.)
//
// # What a call costs
//
//   - A success costs the fixed cost, or what the metered cost function
//     reads from the result. A metered cost that is not an amount within
//     the tool's maximum — NaN, infinite, negative, above it — or a cost
//     function that panics is hostile input: the call is charged the
//     maximum and [WithOnBadCost] is told.
//   - A call that never ran the tool costs nothing: circuit-open,
//     rate-limited, retry-budget-exhausted, run-limit-exceeded,
//     tool-not-permitted, tool-args-invalid, tool-not-found,
//     approval-pending, approval-denied, budget-exceeded, a guardrail that
//     blocked the arguments, and a call the timeout layer refused to start
//     (taxonomy.EffectOf says taxonomy.EffectNotStarted). An error a retry
//     layer makes after its attempts (its budget or the run's attempts
//     used up, a wait past the deadline) is as its cause, the last
//     attempt's: one that stopped after a timeout is charged.
//   - Any other failure, a cancellation and a panic cost the fixed cost or
//     the maximum: the tool ran and may have spent it (a supplier bills a
//     request it then fails, a transient failure included), and a failed
//     call's result is not read. A call whose outcome is unknown — a
//     timeout of any kind, an execution the timeout layer abandoned and
//     that may still land, a reset after sending — is settled as spent,
//     never refunded. So is a call a retry layer inside this one made more
//     than once, whatever its last error: its earlier attempts ran.
//
// # The run's account
//
// [ContextWithLimit] puts an [Account] in the context; every call made with it,
// or a context derived from it, draws on that account, so give it to the
// run's context once. [AccountFrom] reads it ([Account.Spent],
// [Account.Held], [Account.Left]). A call whose context carries no account
// is not limited, and a tool without a declared cost passes through: the
// limit is the loop's to set. A limit that is not an amount (NaN, an
// infinity, a negative number) fails closed: no call that costs runs
// ([ValidateLimit] reports it).
//
// # Across replicas
//
// Without a [Store] the account lives in the context, in this process:
// calls of one run served by several replicas draw on one account each.
// With [WithStore] (adapters/redisstate implements it), the spend of a run
// named with budget.WithID is kept in the Store, so the run's limit — the
// limit of the call's Account: give every replica the same — holds across
// the replicas serving it: the run never spends more than its limit in
// all. Each call of a costed tool in a named run whose context carries an
// Account is one round trip to reserve (Reserve) and one to settle
// (Settle); a run without an id, or a call without a run, keeps to the
// Account alone. The Account also holds what the Store admitted on this
// replica, and settles it, so [Account.Spent] and [Account.Held] say what
// the calls it served spent.
//
// When the Store fails or does not answer within the store timeout
// (store.WithTimeout given to WithStore; store.DefaultTimeout, 50 ms, by
// default; and the call's deadline), the call is reserved on the
// replica's own account of the run, kept by run id (up to [MaxLocalRuns]
// runs), which also holds what the Store admitted on that replica; a call
// that account has no room for is refused without asking the Store. The
// failure is reported as a store.Error (Layer "spend", Op "reserve"; to
// store.WithOnError given to WithStore), the call is marked degraded
// (toolmw.Call.Degraded, which spans and logs show), and the Store is left
// alone for store.Rest, a quarter of a second, during which calls reserve locally —
// only the part of the Store that failed, when its error says so (one
// node of a Redis Cluster). So during an outage each replica enforces the
// limit on its own: a run spends at most its limit per replica, not the
// limit in all, however the replica makes its Accounts. [WithFailClosed]
// refuses such calls instead. A call whose context ends while the Store
// is asked does not run: it ends cancelled, or as a timeout when its
// deadline passed, and is not reported (the caller's end, not the
// Store's failure).
//
// An answer that never arrived leaves a Reserve's outcome unknown: the
// Store may apply it late, after the call was refused or reserved
// locally. Every operation therefore carries the call's operation id, and
// the Store applies each op once: every call the Store was asked about,
// and every call that ran on the replica's account and cost something, is
// settled in the Store with its op — a call that did not run with a
// charge of 0, which also makes a late Reserve of it hold nothing, and a
// call that ran locally with what it cost, charged once whether or not
// its Reserve landed too. Settles are sent at once and, while the Store
// does not answer, again after each rest for up to store.GiveUp, ten
// minutes; each failure is reported (Op "settle"). So no reservation is held for a call that ended,
// and once the Store is back its spend holds what every call of the
// outage cost: the run spends nothing past its limit afterwards. A
// settle dropped after ten minutes (reported with store.ErrDropped) leaves that
// call held, or uncharged, in the Store until the
// run expires.
//
// A Store that answers with a spend it cannot read (store.ErrCorrupt: on
// Redis, a "spent" or "held" that is not a decimal amount — "garbage", a
// negative number — or a key of another type) fails the call closed,
// whatever WithFailClosed says: budget-exceeded/spend_store_corrupt, the
// tool does not run, the call is reported (Refused), and the Store is not
// left alone (it answered). Reserving in the Account instead
// would let each replica spend the limit once more, and a spend read as
// zero would open the limit. A party that can write to the Store can
// still lower the spend to a smaller well-formed amount, or delete it;
// that cannot be told from a run that spent less, so the Store is trusted
// that far.
//
// # Where it sits
//
// Just inside retry, so each attempt that reaches the tool is charged — a
// supplier bills every request, a retried one too — and a call refused for
// its cost is not retried:
//
//	stack, err := middleware.Default().InsertAfter(middleware.Retry,
//		middleware.Layer{Name: "spend", Middleware: spend.New(spend.Fixed("search", 0.01))})
//
// Outside retry, one reservation would cover every attempt of a call and
// the retried requests would be spent unseen (the call is then charged in
// full however its last attempt ended, but the limit does not bound its
// attempts). It is not in middleware.Default: costs and limits are the
// application's.
//
// # One execution per reservation
//
// A call the layer reserves for is marked single-execution in its
// context, and the hedge layer does not fan such a call out: with hedge
// inside this layer (retry, then spend, then hedge), a costed call is one
// execution on its one reservation, not an attempt and its hedge on one
// reservation; with hedge outside, each execution it starts reserves its
// own cost here. So the limit holds in either order.
//
// # Configuration
//
// New without costs switches the layer off (it returns the tool
// unchanged). A fixed cost or a metered maximum that is NaN, infinite,
// negative or above [MaxAmount], a nil cost function, a name that is not a
// tool name or a tool given two costs makes New return a [toolmw.Reject]
// middleware, so toolmw.Wrap reports the
// tool-definition-invalid/option_invalid error at start-up; [Validate]
// reports the same error. So does an invalid store option given to
// WithStore (a negative store.WithTimeout). WithOnBadCost(nil) is the
// default, no report.
//
// A Store of your own runs the conformance checks of package spendtest
// (spendtest.TestStore), as the Redis one does; spendtest.MemStore is one
// in memory, for tests.
//
// # Metrics
//
// The layer publishes, per costed tool, what its calls hold now and what
// they were charged, in package state (see middleware/tracing's
// RegisterStateMetrics): toolmw.spend.reserved and toolmw.spend.settled.
// [WithCurrency] names the unit the amounts are in; the series of layers
// in different currencies stay apart, never added up.
//
//	mw := spend.New(spend.Fixed("search", 0.01), spend.WithCurrency("USD"))
//
// # Concurrency
//
// The Middleware, the Tools it makes, an [Account], an [Option] and
// [Validate] are safe for concurrent use. The account's lock is held only
// to add and compare, never across a tool call or a user function, and no
// Store operation spans a tool call.
package spend
