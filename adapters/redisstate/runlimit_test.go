package redisstate_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/runlimit/runlimittest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// callLimited reports whether err is the run-limit-exceeded/run_call_limit
// refusal.
func callLimited(err error) bool {
	info := taxonomy.InfoOf(err)
	return info.Kind == taxonomy.KindRunLimitExceeded && info.Code == taxonomy.CodeRunCallLimit
}

// runCallsFleet returns one stack of the limit per replica, each counting
// on its replica's own Store, and reporting store errors to onErr.
func runCallsFleet(t *testing.T, rs []*replica, tool toolmw.Tool, limit runlimit.Option, timeout time.Duration,
	onErr func(store.Error)) []toolmw.Tool {
	t.Helper()
	var fleet []toolmw.Tool
	for _, r := range rs {
		fleet = append(fleet, mustWrap(t, "cancel_booking", tool, runlimit.New(limit,
			runlimit.WithStore(r.Store.RunCalls(), store.WithTimeout(timeout), store.WithOnError(onErr)))))
	}
	return fleet
}

// inRun returns a context with a new Run named id: each call of these
// tests is made with its own Run, as by a replica that serves one request
// of the run, so no count in the process helps.
func inRun(id string) context.Context {
	return budget.WithRun(context.Background(), budget.WithID(id))
}

// TestRunCallsAcrossReplicas: three replicas, each with its own client and
// stack, racing 90 concurrent calls of a run run a tool declared Once
// exactly once and one declared Max 3 exactly three times; another run has
// its own count. A run's calls are one key, with the Store's TTL.
func TestRunCallsAcrossReplicas(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 3)
	cases := []struct {
		limit runlimit.Option
		want  int
	}{
		{runlimit.Once("cancel_booking"), 1},
		{runlimit.Max("cancel_booking", 3), 3},
	}
	for i, c := range cases {
		c2 := &counted{}
		fleet := runCallsFleet(t, replicas, c2.tool, c.limit, calm, func(e store.Error) {
			t.Errorf("store error: %s: %v", e.Op, e.Err)
		})
		for _, id := range []string{fmt.Sprintf("run-%d-a", i), fmt.Sprintf("run-%d-b", i)} {
			before := c2.runs()
			var refused atomic.Int64
			start := make(chan struct{})
			var wg sync.WaitGroup
			for j := range 90 {
				wg.Go(func() {
					<-start
					_, err := fleet[j%3](inRun(id), nil)
					switch {
					case callLimited(err):
						refused.Add(1)
					case err != nil:
						t.Errorf("call %d: %v", j, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if n := c2.runs() - before; n != c.want {
				t.Errorf("%s: %d executions across three replicas, want %d", id, n, c.want)
			}
			if n := refused.Load(); n != int64(90-c.want) {
				t.Errorf("%s: %d refusals, want %d", id, n, 90-c.want)
			}
		}
	}
	ctx := context.Background()
	keys, err := replicas[0].Client.Keys(ctx, "toolmw:calls:*").Result()
	if err != nil || len(keys) != 4 {
		t.Fatalf("calls keys = %q (%v), want one per run", keys, err)
	}
	for _, k := range keys {
		if ttl := replicas[0].Client.PTTL(ctx, k).Val(); ttl <= 23*time.Hour || ttl > 24*time.Hour {
			t.Errorf("%s expires in %v, want the default TTL, 24h", k, ttl)
		}
	}
}

// transientOnce fails its first run transiently (nothing landed) and
// succeeds after.
type transientOnce struct{ n atomic.Int64 }

func (f *transientOnce) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	if f.n.Add(1) == 1 {
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the upstream is down")
	}
	return toolmw.Text("cancelled"), nil
}

// TestRunCallsConformance: the Store keeps runlimit.Store's contract
// (runlimittest).
func TestRunCallsConformance(t *testing.T) {
	newStore := kitStores(t)
	runlimittest.TestStore(t, func(t *testing.T) runlimit.Store { return newStore(t).RunCalls() })
}

// kitStores starts a redis-server and returns a function making a Store
// on it with a prefix of its own, for each check of a conformance kit.
func kitStores(t *testing.T) func(t *testing.T) *redisstate.Store {
	noLeaks(t)
	srv := startRedis(t)
	n := 0
	return func(t *testing.T) *redisstate.Store {
		n++
		return newReplica(t, srv, redisstate.WithPrefix(fmt.Sprintf("kit-%d:", n))).Store
	}
}

// TestRunCallsRelease: a call that had no effect gives its slot back on
// Redis, so another replica's call of a Once tool runs, and the count
// goes 1, 0, 1. (What each operation does, once per op, is
// TestRunCallsConformance's.)
func TestRunCallsRelease(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 2)
	f := &transientOnce{}
	fleet := runCallsFleet(t, replicas, f.tool, runlimit.Once("cancel_booking"), calm, func(e store.Error) {
		t.Errorf("store error: %s: %v", e.Op, e.Err)
	})
	c := replicas[0].Client
	ctx := context.Background()
	count := func() string {
		keys := c.Keys(ctx, "toolmw:calls:*").Val()
		if len(keys) != 1 {
			return fmt.Sprintf("keys %q", keys)
		}
		return c.HGet(ctx, keys[0], hashed("cancel_booking")).Val()
	}
	if _, err := fleet[0](inRun("run-r"), nil); taxonomy.InfoOf(err).Code != taxonomy.CodeUpstreamUnavailable {
		t.Fatalf("first call: %v, want the transient failure", err)
	}
	if got := count(); got != "0" {
		t.Errorf("after a call with no effect the count is %s, want 0", got)
	}
	if _, err := fleet[1](inRun("run-r"), nil); err != nil {
		t.Fatalf("the other replica's call after the slot came back: %v", err)
	}
	if got := count(); got != "1" {
		t.Errorf("after a call that ran the count is %s, want 1", got)
	}
	if _, err := fleet[0](inRun("run-r"), nil); !callLimited(err) {
		t.Errorf("a second call that ran: %v, want run_call_limit", err)
	}
	if n := f.n.Load(); n != 2 {
		t.Errorf("%d executions, want 2 (the failed one and the one that ran)", n)
	}

}

// TestRunCallsKeys: hostile run ids and tool names (long, binary, with
// Redis protocol in them) make keys of the prefix, "calls:" and 32 hex
// digits, and fields of 32 hex digits; different ids and tools count
// apart, and stores with different prefixes do not share counts.
func TestRunCallsKeys(t *testing.T) {
	testKeys(t, "calls:", func(st *redisstate.Store, hostile string) {
		ctx := context.Background()
		s := st.RunCalls()
		for i, k := range [][2]string{{hostile, hostile}, {hostile, "tool"}, {"run", hostile}} {
			if ok, err := s.Take(ctx, k[0], k[1], 1, hostile+strconv.Itoa(i)+"1"); !ok || err != nil {
				t.Fatalf("first take: %v, %v", ok, err)
			}
			if ok, err := s.Take(ctx, k[0], k[1], 1, hostile+strconv.Itoa(i)+"2"); ok || err != nil {
				t.Fatalf("second take of a limit of one: %v, %v", ok, err)
			}
		}
		if err := s.Release(ctx, hostile, hostile, hostile+"01"); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Take(ctx, hostile, hostile, 1, hostile+"3"); !ok || err != nil {
			t.Fatalf("take after a release: %v, %v", ok, err)
		}
	}, func(names []string) bool { // a tool's: 32 hex digits
		return !slices.ContainsFunc(names, func(f string) bool { return len(f) != 32 || strings.Trim(f, "0123456789abcdef") != "" })
	})
}

// testKeys checks the keys of a port of kind ("calls:", "spend:"): use
// writes two runs through a Store, with names made of hostile, on each of
// two stores of different prefixes; then there are two keys per prefix,
// each the prefix, kind and 32 hex digits, whose fields are an op's ("o"
// and 32 hex digits) or those that named says are the port's own.
func testKeys(t *testing.T, kind string, use func(st *redisstate.Store, hostile string), named func([]string) bool) {
	t.Helper()
	noLeaks(t)
	srv := startRedis(t)
	a := newReplica(t, srv, redisstate.WithPrefix("app-a:"))
	b := newReplica(t, srv, redisstate.WithPrefix("app-b:"))
	hostile := strings.Repeat("id\r\n*1\r\n$8\r\nFLUSHALL\r\n{tag}\x00\xff", 5000)
	for _, r := range []*replica{a, b} {
		use(r.Store, hostile)
	}
	ctx := context.Background()
	keys, err := a.Client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if len(keys) != 4 || !strings.HasPrefix(keys[0], "app-a:"+kind) || !strings.HasPrefix(keys[3], "app-b:"+kind) {
		t.Fatalf("keys = %q, want two runs per prefix", keys)
	}
	isHex := func(s string) bool { return len(s) == 32 && strings.Trim(s, "0123456789abcdef") == "" }
	for _, k := range keys {
		if !isHex(k[len("app-a:"+kind):]) {
			t.Errorf("key %q: want the prefix, %s and 32 hex digits", k, kind)
		}
		var names []string
		for _, f := range a.Client.HKeys(ctx, k).Val() {
			if !strings.HasPrefix(f, "o") || !isHex(f[1:]) { // not an op's
				names = append(names, f)
			}
		}
		slices.Sort(names)
		if !named(names) {
			t.Errorf("key %q has fields %q besides the ops'", k, names)
		}
	}
}

// TestRunCallsRedisDown: with redis-server killed, or busy (DEBUG SLEEP),
// calls of a named run fall back to the replica's count without failing
// or waiting past the store timeout, are reported and marked degraded;
// with WithFailClosed they are refused instead.
func TestRunCallsRedisDown(t *testing.T) {
	testRedisDown(t, redisDown{layer: "runlimit", op: "take", refused: callLimited,
		limited: func(r *replica, failClosed bool, opts ...store.Option) toolmw.Middleware {
			o := []runlimit.Option{runlimit.Max("search", 2), runlimit.WithStore(r.Store.RunCalls(), opts...)}
			if failClosed {
				o = append(o, runlimit.WithFailClosed())
			}
			return runlimit.New(o...)
		},
		run: func(id string) context.Context { return inRun(id) }})
}

// redisDown is a layer with a store of named runs, for testRedisDown.
type redisDown struct {
	layer, op string           // the layer's degraded name and the operation asking the store
	refused   func(error) bool // whether an error is the layer's refusal
	// limited returns the layer on r's store, failing closed or not, with
	// its store options: one that admits two calls of "search" per run.
	limited func(r *replica, failClosed bool, opts ...store.Option) toolmw.Middleware
	run     func(id string) context.Context // a context of a new view of the run named id
}

// testRedisDown checks the layer with redis-server killed, or busy (DEBUG
// SLEEP): its calls of a named run fall back to the replica's own state
// without failing or waiting past the store timeout, each replica running
// two, are reported and marked degraded; fail closed, they are refused,
// not finally.
func testRedisDown(t *testing.T, c redisDown) {
	for _, mode := range []string{"killed", "slowed"} {
		t.Run(mode, func(t *testing.T) {
			noLeaks(t)
			srv := startRedis(t)
			replicas := newReplicas(t, srv, 3)
			var reports atomic.Int64
			var timeouts atomic.Int64 // reported with context.DeadlineExceeded
			onErr := func(e store.Error) {
				if e.Op != c.op {
					return // a write-back still waiting for Redis
				}
				if e.Layer != c.layer || e.Refused {
					t.Errorf("reported %+v, want layer %s, not refused", e, c.layer)
				}
				reports.Add(1)
				if errors.Is(e.Err, context.DeadlineExceeded) {
					timeouts.Add(1)
				}
			}
			ct := &counted{}
			var degraded atomic.Int64
			note := func(next toolmw.Tool) toolmw.Tool {
				return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
					res, err := next(ctx, args)
					if call, _ := toolmw.CallFrom(ctx); call.Degraded == c.layer {
						degraded.Add(1)
					}
					return res, err
				}
			}
			var fleet, closed []toolmw.Tool
			for _, r := range replicas {
				fleet = append(fleet, mustWrap(t, "search", ct.tool, note,
					c.limited(r, false, store.WithTimeout(storeTimeout), store.WithOnError(onErr))))
				closed = append(closed, mustWrap(t, "search", ct.tool, c.limited(r, true, store.WithTimeout(storeTimeout))))
			}
			// Warm every replica's connection. On a loaded machine a warm
			// call of a fail-closed replica may meet the 50 ms store
			// timeout and be refused: it tries again, in a run of its own.
			for i, tool := range append(slices.Clone(fleet), closed...) {
				warm(t, func(try int) error {
					_, err := tool(c.run(fmt.Sprintf("warm-%d-%d", i, try)), nil)
					return err
				})
			}
			switch mode {
			case "killed":
				srv.Kill()
			case "slowed":
				resume := srv.Stall()
				defer func() {
					if err := resume(); err != nil {
						t.Errorf("resume redis-server: %v", err)
					}
				}()
			}
			// The warm calls may have fallen back on a loaded machine (the
			// store timeout is 50 ms): count from here.
			before, reportsBefore, degradedBefore := ct.runs(), reports.Load(), degraded.Load()
			for i, tool := range fleet {
				// One view of the run per replica: it bounds the replica.
				ctx := c.run("run-down")
				for j := range 3 {
					call, cancel := context.WithTimeout(ctx, stalledCallTimeout)
					start := time.Now()
					_, err := tool(call, nil)
					cancel()
					if took := time.Since(start); took > storeTimeout+loadSlack {
						t.Errorf("replica %d call %d took %v, want at most the store timeout, %v (+ %v for a loaded machine)", i, j, took, storeTimeout, loadSlack)
					}
					if want := j < 2; (err == nil) != want || !want && !c.refused(err) {
						t.Errorf("replica %d call %d: %v, want it to run: %v", i, j, err, want)
					}
				}
			}
			if n := ct.runs() - before; n != 2*len(fleet) {
				t.Errorf("%d executions while Redis was down, want the limit per replica, %d", n, 2*len(fleet))
			}
			// The third call of each replica is refused by the replica's
			// own state of the run, full: the store is not asked.
			if n := reports.Load() - reportsBefore; n != 2*int64(len(fleet)) {
				t.Errorf("%d store errors reported, want one per call that asked, %d", n, 2*len(fleet))
			}
			if n := timeouts.Load(); mode == "slowed" && n < int64(len(fleet)) {
				t.Errorf("%d reports of context.DeadlineExceeded, want one per replica at least", n)
			}
			if n := degraded.Load() - degradedBefore; n != 2*int64(len(fleet)) {
				t.Errorf("%d calls marked degraded, want every call that asked, %d", n, 2*len(fleet))
			}
			for i, tool := range closed {
				call, cancel := context.WithTimeout(c.run("run-closed"), stalledCallTimeout)
				start := time.Now()
				_, err := tool(call, nil)
				took := time.Since(start)
				cancel()
				if !c.refused(err) || taxonomy.IsFinal(err) {
					t.Errorf("fail closed, replica %d: %v, want the layer's refusal, not final", i, err)
				}
				if took > storeTimeout+loadSlack {
					t.Errorf("fail closed, replica %d took %v, want at most the store timeout, %v (+ %v for a loaded machine)", i, took, storeTimeout, loadSlack)
				}
			}
		})
	}
}

// hashed returns the 32 hex digits of s's SHA-256 the Store names keys and
// fields by.
func hashed(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// corruptions are what a hostile or broken writer may leave where a count
// or an amount belongs: none of them is a count.
var corruptions = []string{"garbage", "", "-1", "1.5", " 0", "0 ", "+1", "1e3", "0x10", "01", "inf", "nan",
	"99999999999999999999", "9007199254740992"}

// TestRunCallsCorruptCount: a run's call count on Redis that does not
// parse — garbage, a negative or fractional number, a sign, a space, an
// exponent, a number past 2^53, a key that is not a hash — fails closed: a
// tool declared Once that ran is not run again
// (run-limit-exceeded/run_calls_corrupt, even without WithFailClosed), and
// the Store's answer is reported as store.ErrCorrupt, for Take and for
// Release; the corrupt key keeps a TTL. (It used to read as 0: the tool
// ran again.)
func TestRunCallsCorruptCount(t *testing.T) {
	field := hashed("pay")
	r := testCorrupt(t, redisCorrupt{kind: "calls:", op: "take", code: taxonomy.CodeRunCallsCorrupt,
		writes: func(r *replica) map[string]func(key string) error {
			ctx := context.Background()
			corrupt := map[string]func(key string) error{}
			for _, v := range corruptions {
				corrupt[fmt.Sprintf("field %q", v)] = func(key string) error { return r.Client.HSet(ctx, key, field, v).Err() }
			}
			corrupt["a string key"] = func(key string) error { return r.Client.Set(ctx, key, "1", 0).Err() }
			corrupt["a list key"] = func(key string) error {
				r.Client.Del(ctx, key)
				return r.Client.RPush(ctx, key, "0").Err()
			}
			return corrupt
		},
		limited: func(r *replica, opts ...store.Option) toolmw.Middleware {
			return runlimit.New(runlimit.Once("pay"), runlimit.WithStore(r.Store.RunCalls(), opts...))
		},
		run: func(id string) context.Context { return inRun(id) },
		settle: func(r *replica, id string) error {
			return r.Store.RunCalls().Release(context.Background(), id, "pay", "op")
		}})

	// Well-formed counts still count: 0 admits, the limit refuses.
	ctx := context.Background()
	for v, want := range map[string]bool{"0": true, "1": false, "7": false} {
		id := "run-wellformed-" + v
		if err := r.Client.HSet(ctx, "toolmw:calls:"+hashed(id), field, v).Err(); err != nil {
			t.Fatal(err)
		}
		ok, err := r.Store.RunCalls().Take(ctx, id, "pay", 1, "op")
		if ok != want || err != nil {
			t.Errorf("count %s: Take = %t, %v; want %t", v, ok, err, want)
		}
	}
}

// redisCorrupt is a port whose state a hostile writer corrupts, for
// testCorrupt.
type redisCorrupt struct {
	kind, op string // the port's keys' kind ("calls:") and the operation asking the store
	code     string // the layer's refusal of a corrupt state
	// writes returns the ways to corrupt a run's key on r, by name.
	writes func(r *replica) map[string]func(key string) error
	// limited returns the layer of a tool "pay" on r's store, with its
	// store options, that runs the tool once per run.
	limited func(r *replica, opts ...store.Option) toolmw.Middleware
	run     func(id string) context.Context // a context of a new view of the run named id
	settle  func(r *replica, id string) error
}

// testCorrupt checks, for each way to corrupt a run's key, that a call of
// a run whose tool ran once, through another replica, fails closed with
// c.code, three times, each reported as store.ErrCorrupt (Refused), that
// the tool does not run again, that the port's settling operation answers
// store.ErrCorrupt, and that the key keeps a TTL. It returns the replica
// it used.
func testCorrupt(t *testing.T, c redisCorrupt) *replica {
	t.Helper()
	noLeaks(t)
	srv := startRedis(t)
	r := newReplica(t, srv)
	ctx := context.Background()
	i := 0
	for name, write := range c.writes(r) {
		t.Run(name, func(t *testing.T) {
			i++
			id := fmt.Sprintf("run-corrupt-%d", i)
			var reports []store.Error
			var mu sync.Mutex
			ct := &counted{}
			// The run's call is made on another replica: this one's own
			// state of the run would refuse without asking Redis.
			first := mustWrap(t, "pay", ct.tool, c.limited(r, store.WithTimeout(calm)))
			tool := mustWrap(t, "pay", ct.tool, c.limited(r, store.WithTimeout(calm),
				store.WithOnError(func(e store.Error) { mu.Lock(); reports = append(reports, e); mu.Unlock() })))
			if _, err := first(c.run(id), nil); err != nil {
				t.Fatal(err)
			}
			key := "toolmw:" + c.kind + hashed(id)
			if err := write(key); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				_, err := tool(c.run(id), nil)
				if code := taxonomy.InfoOf(err).Code; code != c.code {
					t.Fatalf("a call on a corrupt state: %v, want %s", err, c.code)
				}
			}
			if ct.runs() != 1 {
				t.Fatalf("the tool that may run once per run ran %d times", ct.runs())
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reports) != 3 || reports[0].Op != c.op || !reports[0].Refused || !errors.Is(reports[0].Err, store.ErrCorrupt) {
				t.Fatalf("reports %v, want three %ss reported as store.ErrCorrupt, refused", reports, c.op)
			}
			if err := c.settle(r, id); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("settling on a corrupt state: %v, want store.ErrCorrupt", err)
			}
			if ttl := r.Client.PTTL(ctx, key).Val(); ttl <= 0 {
				t.Errorf("the corrupt key has no TTL (%v): it would never expire", ttl)
			}
		})
	}
	return r
}
