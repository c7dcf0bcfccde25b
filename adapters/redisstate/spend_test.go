package redisstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/middleware/spend/spendtest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// spendLimited reports whether err is the budget-exceeded/spend_limit
// refusal.
func spendLimited(err error) bool {
	info := taxonomy.InfoOf(err)
	return info.Kind == taxonomy.KindBudgetExceeded && info.Code == taxonomy.CodeSpendLimit
}

// spendRun returns a context with a new Account of limit and a new Run
// named id: each call of these tests is made with its own, as by a replica
// that serves one request of the run, so no account in the process helps.
func spendRun(id string, limit float64) context.Context {
	return budget.WithRun(spend.ContextWithLimit(context.Background(), limit), budget.WithID(id))
}

// spendGauge measures, at the tool, what the executions begun so far may
// cost (each adds its maximum as it starts, and what it cost as it ends).
type spendGauge struct {
	mu          sync.Mutex
	begun, peak int64 // billionths
	runs        int
}

func (g *spendGauge) tool(most, cost int64) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) {
		g.mu.Lock()
		g.begun += most
		g.peak = max(g.peak, g.begun)
		g.runs++
		g.mu.Unlock()
		time.Sleep(5 * time.Millisecond) // so the admitted calls overlap
		g.mu.Lock()
		g.begun += cost - most
		g.mu.Unlock()
		return toolmw.Text(strconv.FormatFloat(float64(cost)/1e9, 'f', -1, 64)), nil
	}
}

// readCost reads a metered cost from a result's text.
func readCost(res toolmw.Result) float64 {
	v, _ := strconv.ParseFloat(res.Content, 64)
	return v
}

// spendHash returns a run's "spent" and "held" fields on Redis.
func spendHash(t *testing.T, c *redis.Client, key string) (spent, held string) {
	t.Helper()
	v, err := c.HMGet(context.Background(), key, "spent", "held").Result()
	if err != nil {
		t.Fatal(err)
	}
	s, _ := v[0].(string)
	h, _ := v[1].(string)
	return s, h
}

// TestSpendAcrossReplicas: three replicas, each with its own client and
// stack, racing 90 concurrent calls of a run, each with its own Account
// and Run of the same id, run exactly as many calls as fit the limit
// (14 of 0.07 in 1), and what the executions begun may cost, measured at
// the tool, never goes above the limit; another run has its own spend. A
// metered tool settles to what its calls read: at least the 10 calls that
// fit at their maximum run, more when some end before others reserve.
// A run's spend is one key, with the Store's TTL.
func TestSpendAcrossReplicas(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 3)
	const limit = 1.0
	cases := []struct {
		name      string
		cost      spend.Option
		max, read int64 // billionths
		runs      int   // executions; 0: at least limit/max
	}{
		{"fixed", spend.Fixed("search", 0.07), 70_000_000, 70_000_000, 14},
		{"metered", spend.Metered("search", 0.1, readCost), 100_000_000, 37_000_000, 0},
	}
	for i, c := range cases {
		g := &spendGauge{}
		var fleet []toolmw.Tool
		for _, r := range replicas {
			fleet = append(fleet, mustWrap(t, "search", g.tool(c.max, c.read), spend.New(c.cost,
				spend.WithStore(r.Store.Spend(), store.WithTimeout(calm),
					store.WithOnError(func(e store.Error) { t.Errorf("store error: %s: %v", e.Op, e.Err) })))))
		}
		for _, id := range []string{fmt.Sprintf("run-%d-a", i), fmt.Sprintf("run-%d-b", i)} {
			g.mu.Lock()
			before := g.runs
			g.mu.Unlock()
			var refused atomic.Int64
			start := make(chan struct{})
			var wg sync.WaitGroup
			for j := range 90 {
				wg.Go(func() {
					<-start
					_, err := fleet[j%3](spendRun(id, limit), nil)
					switch {
					case spendLimited(err):
						refused.Add(1)
					case err != nil:
						t.Errorf("call %d: %v", j, err)
					}
				})
			}
			close(start)
			wg.Wait()
			g.mu.Lock()
			runs, peak := g.runs-before, g.peak
			g.begun, g.peak = 0, 0 // the next run starts with nothing spent
			g.mu.Unlock()
			if peak > 1e9 {
				t.Errorf("%s %s: what the executions begun may cost peaked at %d billionths, over the limit", c.name, id, peak)
			}
			if c.runs != 0 && runs != c.runs || c.runs == 0 && int64(runs) < 1e9/c.max {
				t.Errorf("%s %s: %d executions across three replicas, want %d", c.name, id, runs, c.runs)
			}
			if n := refused.Load(); n != int64(90-runs) {
				t.Errorf("%s %s: %d refusals, want %d", c.name, id, n, 90-runs)
			}
			keys := replicas[0].Client.Keys(context.Background(), "toolmw:spend:*").Val()
			var found bool
			for _, k := range keys {
				spent, held := spendHash(t, replicas[0].Client, k)
				if spent == strconv.FormatInt(int64(runs)*c.read, 10) && held == "0" {
					found = true
				}
			}
			if !found {
				t.Errorf("%s %s: no key with spent %d and held 0 among %q", c.name, id, int64(runs)*c.read, keys)
			}
			t.Logf("%s %s: %d executions, peak %d billionths of 1e9", c.name, id, runs, peak)
		}
	}
	ctx := context.Background()
	keys, err := replicas[0].Client.Keys(ctx, "toolmw:spend:*").Result()
	if err != nil || len(keys) != 4 {
		t.Fatalf("spend keys = %q (%v), want one per run", keys, err)
	}
	for _, k := range keys {
		if ttl := replicas[0].Client.PTTL(ctx, k).Val(); ttl <= 23*time.Hour || ttl > 24*time.Hour {
			t.Errorf("%s expires in %v, want the default TTL, 24h", k, ttl)
		}
	}
}

// TestSpendConformance: the Store keeps spend.Store's contract
// (spendtest).
func TestSpendConformance(t *testing.T) {
	newStore := kitStores(t)
	spendtest.TestStore(t, func(t *testing.T) spend.Store { return newStore(t).Spend() })
}

// TestSpendSettle: on Redis, a run's spend is its hash's "spent" and
// "held", in billionths, refreshed to the TTL by each operation; a Settle
// of a run never reserved writes only what it charged. (What each
// operation does, once per op, is TestSpendConformance's.)
func TestSpendSettle(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	r := newReplica(t, srv)
	st := r.Store.Spend()
	ctx := context.Background()
	keys := func() string {
		keys := r.Client.Keys(ctx, "toolmw:spend:*").Val()
		slices.Sort(keys)
		return strings.Join(keys, ",")
	}
	steps := []struct {
		name        string
		op          func() (spent, held int64, ok bool, err error)
		spent, held int64
		ok          bool
	}{
		{"reserve 60", func() (int64, int64, bool, error) { return st.Reserve(ctx, "run-s", 100, 60, "a") }, 0, 60, true},
		{"settle 60 to 25", func() (int64, int64, bool, error) { return 0, 0, true, st.Settle(ctx, "run-s", "a", 25) }, 25, 0, true},
		{"settle an op never reserved: a write-back", func() (int64, int64, bool, error) { return 0, 0, true, st.Settle(ctx, "run-s", "e", 45) }, 70, 0, true},
		{"reserve 30 fits exactly", func() (int64, int64, bool, error) { return st.Reserve(ctx, "run-s", 100, 30, "g") }, 70, 30, true},
	}
	for _, s := range steps {
		spent, held, ok, err := s.op()
		if err != nil || ok != s.ok {
			t.Fatalf("%s: ok %v err %v, want ok %v", s.name, ok, err, s.ok)
		}
		if strings.HasPrefix(s.name, "reserve") && (spent != s.spent || held != s.held) {
			t.Errorf("%s: answered spent %d held %d, want %d and %d", s.name, spent, held, s.spent, s.held)
		}
		hs, hh := spendHash(t, r.Client, keys())
		if hs != strconv.FormatInt(s.spent, 10) && !(s.spent == 0 && hs == "") || hh != strconv.FormatInt(s.held, 10) {
			t.Errorf("%s: on Redis spent %q held %q, want %d and %d", s.name, hs, hh, s.spent, s.held)
		}
	}
	r.Client.PExpire(ctx, keys(), time.Minute)
	if _, _, _, err := st.Reserve(ctx, "run-s", 100, 0, "h"); err != nil {
		t.Fatal(err)
	}
	if ttl := r.Client.PTTL(ctx, keys()).Val(); ttl <= 23*time.Hour || ttl > 24*time.Hour {
		t.Errorf("after a reserve the run's spend expires in %v, want the default TTL, 24h", ttl)
	}
	if err := r.Client.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := st.Settle(ctx, "run-never-reserved", "x", 7); err != nil {
		t.Fatal(err)
	}
	if hs, hh := spendHash(t, r.Client, keys()); hs != "7" || hh != "" {
		t.Errorf("settle of a run never reserved: spent %q held %q, want 7 and no hold", hs, hh)
	}

	// Through the layer: a metered call settles to what it read.
	if err := r.Client.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	tool := mustWrap(t, "summarise", func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("0.123456789"), nil
	}, spend.New(spend.Metered("summarise", 0.5, readCost), spend.WithStore(st, store.WithTimeout(calm),
		store.WithOnError(func(e store.Error) { t.Errorf("store error: %s: %v", e.Op, e.Err) }))))
	if _, err := tool(spendRun("run-m", 1), nil); err != nil {
		t.Fatal(err)
	}
	if hs, hh := spendHash(t, r.Client, keys()); hs != "123456789" || hh != "0" {
		t.Errorf("a metered call: spent %q held %q, want what it read, 123456789 billionths, and 0", hs, hh)
	}
}

// TestSpendKeys: hostile run ids (long, binary, with Redis protocol in
// them) make keys of the prefix, "spend:" and 32 hex digits, with the
// fields held and spent; different ids keep apart, and stores with
// different prefixes do not share spend.
func TestSpendKeys(t *testing.T) {
	testKeys(t, "spend:", func(st *redisstate.Store, hostile string) {
		ctx := context.Background()
		s := st.Spend()
		for _, id := range []string{hostile, hostile + "x"} {
			if _, _, ok, err := s.Reserve(ctx, id, 10, 10, hostile+"1"); !ok || err != nil {
				t.Fatalf("first reserve: %v, %v", ok, err)
			}
			if _, _, ok, err := s.Reserve(ctx, id, 10, 1, hostile+"2"); ok || err != nil {
				t.Fatalf("a reserve past the limit: %v, %v", ok, err)
			}
		}
		if err := s.Settle(ctx, hostile, hostile+"1", 0); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, err := s.Reserve(ctx, hostile, 10, 10, hostile+"3"); !ok || err != nil {
			t.Fatalf("reserve after a settle to 0: %v, %v", ok, err)
		}
	}, func(names []string) bool {
		return slices.Equal(names, []string{"held", "spent"}) || slices.Equal(names, []string{"held"})
	})
}

// TestSpendAmountBound: the port keeps amounts up to 2^53-1 billionths
// exactly, and refuses a larger or negative limit, amount, hold or charge
// with a clear error before any round trip; through the layer, a limit
// past the bound falls back to the call's Account, reported.
func TestSpendAmountBound(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	r := newReplica(t, srv)
	st := r.Store.Spend()
	ctx := context.Background()
	const top = 1<<53 - 1
	bad := []struct {
		name string
		op   func() error
	}{
		{"limit 2^53", func() error { _, _, _, err := st.Reserve(ctx, "run-b", 1<<53, 1, "op"); return err }},
		{"amount 2^53", func() error { _, _, _, err := st.Reserve(ctx, "run-b", top, 1<<53, "op"); return err }},
		{"limit 10^18", func() error { _, _, _, err := st.Reserve(ctx, "run-b", 1e18, 1, "op"); return err }},
		{"negative amount", func() error { _, _, _, err := st.Reserve(ctx, "run-b", top, -1, "op"); return err }},
		{"charge 2^53", func() error { return st.Settle(ctx, "run-b", "op", 1<<53) }},
	}
	for _, c := range bad {
		trips := r.RoundTrips.n.Load()
		err := c.op()
		if err == nil || !strings.Contains(err.Error(), "2^53") {
			t.Errorf("%s: %v, want the 2^53 bound", c.name, err)
		}
		if n := r.RoundTrips.n.Load() - trips; n != 0 {
			t.Errorf("%s: %d round trips, want none", c.name, n)
		}
	}
	// At the bound, exact: a double would round 2^53-1 - 1 … the sums stay whole.
	if spent, held, ok, err := st.Reserve(ctx, "run-b", top, top, "op1"); !ok || err != nil || spent != 0 || held != top {
		t.Fatalf("reserve the whole bound: %d %d %v %v", spent, held, ok, err)
	}
	if spent, held, ok, err := st.Reserve(ctx, "run-b", top, 1, "op2"); ok || err != nil || spent != 0 || held != top {
		t.Fatalf("one more billionth: %d %d %v %v, want refused", spent, held, ok, err)
	}
	if err := st.Settle(ctx, "run-b", "op1", top-2); err != nil {
		t.Fatal(err)
	}
	if spent, held, ok, err := st.Reserve(ctx, "run-b", top, 2, "op3"); !ok || err != nil || spent != top-2 || held != 2 {
		t.Fatalf("the last two billionths: %d %d %v %v", spent, held, ok, err)
	}
	if spent, held, ok, err := st.Reserve(ctx, "run-b", top, 1, "op4"); ok || err != nil || spent != top-2 || held != 2 {
		t.Fatalf("past the bound: %d %d %v %v, want refused", spent, held, ok, err)
	}

	// Through the layer: a limit of 10 million units is past the bound.
	var reported []error
	tool := mustWrap(t, "search", (&counted{}).tool, spend.New(spend.Fixed("search", 1), spend.WithStore(st, store.WithOnError(func(e store.Error) { reported = append(reported, e.Err) }))))
	ctx = spendRun("run-big", 1e7)
	if _, err := tool(ctx, nil); err != nil {
		t.Fatalf("a limit past the bound: %v, want the call reserved locally", err)
	}
	if acct, _ := spend.AccountFrom(ctx); acct.Spent() != 1 || len(reported) != 1 || !strings.Contains(reported[0].Error(), "2^53") {
		t.Errorf("account spent %v, reported %v: want 1 and the bound's error", acct.Spent(), reported)
	}
}

// TestSpendRedisDown: with redis-server killed, or busy (DEBUG SLEEP),
// costed calls of a named run fall back to the replica's own account
// (here, each replica's Account of 0.2) without failing or waiting past
// the store timeout, are reported and marked degraded; with
// WithFailClosed they are refused instead.
func TestSpendRedisDown(t *testing.T) {
	testRedisDown(t, redisDown{layer: "spend", op: "reserve", refused: spendLimited,
		limited: func(r *replica, failClosed bool, opts ...store.Option) toolmw.Middleware {
			o := []spend.Option{spend.Fixed("search", 0.1), spend.WithStore(r.Store.Spend(), opts...)}
			if failClosed {
				o = append(o, spend.WithFailClosed())
			}
			return spend.New(o...)
		},
		run: func(id string) context.Context { return spendRun(id, 0.2) }})
}

// TestSpendCorrupt: a run's spend on Redis whose "spent" or "held" does
// not parse — garbage, a negative or fractional amount, a sign, a space,
// an exponent, one past 2^53, or a key that is not a hash — fails closed:
// a tool costing the whole limit that ran is not run again
// (budget-exceeded/spend_store_corrupt, even without WithFailClosed), and
// the Store's answer is reported as store.ErrCorrupt, for Reserve and for
// Settle. (It used to read as 0: the tool ran again.)
func TestSpendCorrupt(t *testing.T) {
	testCorrupt(t, redisCorrupt{kind: "spend:", op: "reserve", code: taxonomy.CodeSpendCorrupt,
		writes: func(r *replica) map[string]func(key string) error {
			ctx := context.Background()
			corrupt := map[string]func(key string) error{}
			for _, field := range []string{"spent", "held"} {
				for _, v := range corruptions {
					corrupt[fmt.Sprintf("%s %q", field, v)] = func(key string) error { return r.Client.HSet(ctx, key, field, v).Err() }
				}
			}
			corrupt["a string key"] = func(key string) error { return r.Client.Set(ctx, key, "0", 0).Err() }
			return corrupt
		},
		limited: func(r *replica, opts ...store.Option) toolmw.Middleware {
			return spend.New(spend.Fixed("pay", 1), spend.WithStore(r.Store.Spend(), opts...))
		},
		run:    func(id string) context.Context { return spendRun(id, 1) },
		settle: func(r *replica, id string) error { return r.Store.Spend().Settle(context.Background(), id, "op", 1) }})
}

// TestSpendRoundsUpOnRedis: through the Store too, a cost below a
// billionth is charged a billionth: Fixed(4e-10) under a limit of 0 runs
// no call of 1,000, across two replicas, and under a limit of one
// billionth runs one. (It used to cost nothing: 1,000 of 1,000 ran.)
func TestSpendRoundsUpOnRedis(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 2)
	for _, c := range []struct {
		limit float64
		want  int
	}{{0, 0}, {1e-9, 1}} {
		counter := &counted{}
		var fleet []toolmw.Tool
		for _, r := range replicas {
			fleet = append(fleet, mustWrap(t, "search", counter.tool, spend.New(spend.Fixed("search", 4e-10),
				spend.WithStore(r.Store.Spend(), store.WithTimeout(calm),
					store.WithOnError(func(e store.Error) { t.Errorf("store error: %s: %v", e.Op, e.Err) })))))
		}
		id := fmt.Sprintf("run-tiny-%v", c.limit)
		for i := range 1000 {
			_, _ = fleet[i%2](spendRun(id, c.limit), nil)
		}
		if counter.runs() != c.want {
			t.Errorf("limit %v: %d of 1000 calls ran, want %d", c.limit, counter.runs(), c.want)
		}
	}
}
