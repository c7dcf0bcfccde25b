// Package redisstate keeps toolmw's state on Redis, shared by every replica
// of a fleet: rate limits, retry token budgets, the attempt counts, the
// per-run call limits and the spend of runs served by several replicas,
// circuit breakers, approval decisions, and the records of calls made once
// across crashes and replicas. It implements the ports of
// middleware/ratelimit, budget, middleware/runlimit, middleware/spend,
// middleware/breaker, middleware/approval and middleware/dedupe on
// github.com/redis/go-redis/v9; the layers keep their in-process state
// when they are given no store.
//
//	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
//	shared, err := redisstate.New(rdb, redisstate.WithPrefix("myapp:"))
//
//	ratelimit.New(10, 20, ratelimit.WithStore(shared.RateLimits()))           // 10/s across the fleet
//	retry.WithBudget(budget.NewAdaptive(
//		budget.WithTokenStore(shared.RetryBudget("search-api"))))            // one retry bucket for the fleet
//	ctx = budget.WithRun(ctx, budget.WithID(runID),
//		budget.WithRunStore(shared.Runs()))                                  // one count per run
//	runlimit.New(runlimit.Once("cancel_booking"),
//		runlimit.WithStore(shared.RunCalls()))                               // once per named run, fleet-wide
//	spend.New(spend.Fixed("search", 0.01),
//		spend.WithStore(shared.Spend()))                                     // a named run's spend limit, fleet-wide
//	breaker.New(breaker.WithStore(shared.Breakers()))                        // one breaker per tool for the fleet
//	approval.NewDesk(approval.WithStore(shared.Approvals()), approval.WithSealKey(key)) // decisions every replica sees
//	dedupe.New(dedupe.WithStore(shared.CallRecords()))                       // a named run's call made once, across crashes and replicas
//
// # Keys
//
// Every key starts with the prefix ([WithPrefix], default "toolmw:") and
// ends with 32 hex digits of the SHA-256 of the name it is for, so names,
// which may be hostile, choose no byte of a key and cannot make it long:
//
//	PREFIX rl:  HASH(key)     string  a rate limit's GCRA state (µs of Redis's clock); expires when full
//	PREFIX rb:  HASH(name)    string  a retry bucket's balance, in thousandths of a token; expires after the TTL
//	PREFIX run: HASH(run id)  hash    HASH(tool) → attempts used in the run; expires after the TTL
//	PREFIX calls: HASH(run id) hash   HASH(tool) → calls admitted in the run (runlimit); expires after the TTL
//	PREFIX spend: HASH(run id) hash   spent, held: the run's spend in billionths (spend; below 2^53); expires after the TTL
//	PREFIX cb:  HASH(name)    hash    a breaker's shared state and probe lease; none while closed without failures; expires after the TTL past its open period or last write
//	PREFIX apr: HASH(id)      string  an approval's sealed row; expires after ApprovalTTL
//	PREFIX aprn: HASH(nonce)  string  a used approval's nonce; expires after ApprovalTTL
//	PREFIX dd: HASH(run id) HASH(key)  hash  a call's record: s, op, a, u, k and, once done, o (dedupe); expires keep after its last write, never before its lease ends
//	PREFIX res: HASH(key)     hash    m, v: a tool's result the cache or the fallback kept (made, in ms; its encoding); expires after the writer's TTL
//
// Each operation is one Lua script touching one key, so it works on Redis
// Cluster, and one round trip (two the first time after Redis restarts,
// when the script is sent again). No lock is held across a tool call.
//
// # Call records
//
// [Store.CallRecords] is dedupe's Store: a call of a named run claims its
// record (a hash of one key) before the tool runs, holding it with a
// lease the layer renews, and finishes it with the outcome after; a
// repeat on any replica, or after a crash, gets the outcome, waits for a
// live holder, or learns that the outcome is unknown. Each of Claim,
// Renew, Finish and Release is one Lua script on the record's key: two
// round trips per call. Every time the scripts compare (a lease's end,
// when a record is forgotten) is the layer's, passed in milliseconds;
// Redis's clock only expires the key (PEXPIRE), never before the lease
// ends. An outcome over dedupe.MaxOutcome is refused before Redis is
// asked, and a record that does not parse is corrupt (store.ErrCorrupt):
// the layer does not run the call.
//
// # Time
//
// The rate limit reads Redis's clock (TIME) in its script, so replicas whose
// clocks disagree admit the same calls. A call the limit admits after a
// wait has its slot reserved on Redis and waits on its replica.
//
// # When Redis is slow or down
//
// The layers bound every operation with a short timeout (50 ms by default,
// store.WithTimeout) and, when it fails, decide with their local state (the
// approval layer fails closed), report it to store.WithOnError, and leave
// Redis alone a quarter of a second; see package store, and the WithStore
// option of each layer (budget: WithTokenStore and WithRunStore). For the
// timeout to hold, the client must honour contexts' deadlines: [New]
// refuses a client made without ContextTimeoutEnabled: true. A client's
// own retries (MaxRetries) happen within the same timeout.
//
// # Redis Cluster and Sentinel
//
// A Sentinel-managed master takes the client redis.NewFailoverClient (or
// redis.NewUniversalClient with a MasterName) makes; it follows the
// sentinels to a promoted replica by itself.
//
// A cluster takes a *redis.ClusterClient made with ContextTimeoutEnabled
// and DisableRoutingPolicies, and without ReadOnly, RouteByLatency or
// RouteRandomly: otherwise go-redis fetches a command table under a lock
// every command takes, with a 5 s timeout of its own, and [New] refuses
// the client with a [*ClientOptionError].
//
//	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs,
//		ContextTimeoutEnabled: true, DisableRoutingPolicies: true})
//
// On a cluster the Store rests one node, not the whole store: an
// operation that fails on a node (unreachable, closed, not answering in
// time) rests that node for [NodeRest], during which the operations on
// its keys fail at once with an error matching [ErrNodeResting]; both
// errors have a PartialOutage method returning true, on which the layers
// fall back for that call only and go on using the other nodes. A failure
// also has the client reload its slot map, which go-redis does not do on
// a network error, so that the fleet follows a failover within moments of
// the cluster. The README's "Deploying" section gives the client and
// server settings a fleet needs, what persistence each port needs, and
// what a failover costs, measured.
//
// # Concurrency
//
// A [Store] and the ports it returns are safe for concurrent use. The
// client is the caller's: it closes it.
package redisstate
