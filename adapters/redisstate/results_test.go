package redisstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/store/storetest"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestResultsConformance: the Store keeps store.Results' contract
// (storetest).
func TestResultsConformance(t *testing.T) {
	newStore := kitStores(t)
	storetest.TestResults(t, func(t *testing.T) store.Results { return newStore(t).Results() })
}

// TestResultsKeys: hostile keys make keys of the prefix, "res:" and 32
// hex digits, each a hash of the fields m and v only; stores with
// different prefixes keep their own results.
func TestResultsKeys(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	a := newReplica(t, srv, redisstate.WithPrefix("app-a:"))
	b := newReplica(t, srv, redisstate.WithPrefix("app-b:"))
	hostile := strings.Repeat("id\r\n*1\r\n$8\r\nFLUSHALL\r\n{tag}\x00\xff", 5000)
	ctx := context.Background()
	now := time.Now()
	for i, r := range []*replica{a, b} {
		if err := r.Store.Results().Set(ctx, hostile, fmt.Appendf(nil, "v%d", i), now, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	keys, err := a.Client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if len(keys) != 2 {
		t.Fatalf("keys %q, want one per prefix", keys)
	}
	for i, k := range keys {
		prefix := []string{"app-a:res:", "app-b:res:"}[i]
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || len(rest) != 32 || strings.Trim(rest, "0123456789abcdef") != "" {
			t.Errorf("key %q: want %s and 32 hex digits", k, prefix)
		}
		if f := a.Client.HKeys(ctx, k).Val(); len(f) != 2 || !slices.Contains(f, "m") || !slices.Contains(f, "v") {
			t.Errorf("key %q has fields %q, want m and v", k, f)
		}
		if ttl := a.Client.PTTL(ctx, k).Val(); ttl <= 0 || ttl > time.Hour {
			t.Errorf("key %q: time to live %v", k, ttl)
		}
	}
	for i, r := range []*replica{a, b} {
		v, _, err := r.Store.Results().Get(ctx, hostile)
		if err != nil || string(v) != fmt.Sprintf("v%d", i) {
			t.Errorf("replica %d: %q, %v", i, v, err)
		}
	}
}

// TestResultsCorrupt: what a hostile or broken writer may leave at a
// result's key — another type, a field missing, a time that is no time, a
// value over the bound — is store.ErrCorrupt to Get, and the next Set
// replaces it.
func TestResultsCorrupt(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	r := newReplica(t, srv)
	res := r.Store.Results()
	ctx := context.Background()
	c := r.Client
	for name, write := range map[string]func(key string) error{
		"a string":       func(k string) error { return c.Set(ctx, k, "garbage", 0).Err() },
		"a list":         func(k string) error { return c.RPush(ctx, k, "a").Err() },
		"no v":           func(k string) error { return c.HSet(ctx, k, "m", "1").Err() },
		"no m":           func(k string) error { return c.HSet(ctx, k, "v", "x").Err() },
		"m garbage":      func(k string) error { return c.HSet(ctx, k, "m", "soon", "v", "x").Err() },
		"m empty":        func(k string) error { return c.HSet(ctx, k, "m", "", "v", "x").Err() },
		"m fraction":     func(k string) error { return c.HSet(ctx, k, "m", "1.5", "v", "x").Err() },
		"m leading zero": func(k string) error { return c.HSet(ctx, k, "m", "01", "v", "x").Err() },
		"m 17 digits":    func(k string) error { return c.HSet(ctx, k, "m", "12345678901234567", "v", "x").Err() },
		"m minus only":   func(k string) error { return c.HSet(ctx, k, "m", "-", "v", "x").Err() },
		"v over the bound": func(k string) error {
			return c.HSet(ctx, k, "m", "1", "v", strings.Repeat("x", store.MaxResultBytes+1)).Err()
		},
	} {
		t.Run(name, func(t *testing.T) {
			key := "result-" + name
			if err := write(r.keyOf(key)); err != nil {
				t.Fatal(err)
			}
			if v, _, err := res.Get(ctx, key); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Get: %.20q, %v; want store.ErrCorrupt", v, err)
			}
			made := time.UnixMilli(1_000) // older than anything a writer left
			if err := res.Set(ctx, key, []byte("good"), made, time.Hour); err != nil {
				t.Fatalf("Set over it: %v", err)
			}
			if v, m, err := res.Get(ctx, key); err != nil || string(v) != "good" || !m.Equal(made) {
				t.Fatalf("after Set: %q, %v, %v", v, m, err)
			}
		})
	}
}

// keyOf is the Redis key of a result's key, as the Store names it.
func (r *replica) keyOf(key string) string { return "toolmw:res:" + hashed(key) }

var ratesSpec = toolmw.Spec{Name: "exchange_rate", Idempotent: true}

// rateTool answers "rate N", numbering its executions, or fails with an
// open circuit while down is set.
type rateTool struct {
	down  atomic.Bool
	execs atomic.Int64
}

func (r *rateTool) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	n := r.execs.Add(1)
	if r.down.Load() {
		return toolmw.Result{}, taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "the circuit is open")
	}
	return toolmw.Text(fmt.Sprintf("rate %d", n)), nil
}

// TestResultsAcrossReplicas: on one Redis, a result one replica's cache
// kept is served by another replica's cache without calling the tool, and
// by a third replica's fallback while its tool's circuit is open. A
// cache hit costs a replica one round trip the first time, none after.
func TestResultsAcrossReplicas(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	rs := newReplicas(t, srv, 3)
	var tool rateTool
	onErr := func(e store.Error) { t.Errorf("store error: %+v", e) }
	cached := func(r *replica) toolmw.Tool {
		w, err := toolmw.Wrap(ratesSpec, tool.tool, cache.New(time.Minute, cache.WithSharedResults(),
			cache.WithStore(r.Store.Results(), store.WithTimeout(calm), store.WithOnError(onErr))))
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	args := json.RawMessage(`{"from":"EUR","to":"NOK"}`)
	ctx := context.Background()
	a, b := cached(rs[0]), cached(rs[1])
	if res, err := a(ctx, args); err != nil || res.Content != "rate 1" {
		t.Fatalf("a: %q, %v", res.Content, err)
	}
	if err := rs[1].Client.Ping(ctx).Err(); err != nil { // the connection's own commands are not the cache's
		t.Fatal(err)
	}
	before := rs[1].RoundTrips.n.Load()
	for range 3 {
		if res, err := b(ctx, json.RawMessage(`{"to":"NOK","from":"EUR"}`)); err != nil || res.Content != "rate 1" {
			t.Fatalf("b: %q, %v; want a's result", res.Content, err)
		}
	}
	if n := rs[1].RoundTrips.n.Load() - before; n != 1 {
		t.Errorf("b: %d round trips for three hits, want 1 (then its own memory)", n)
	}
	tool.down.Store(true)
	c, err := toolmw.Wrap(ratesSpec, tool.tool, fallback.New(fallback.WithLastGood(time.Hour), fallback.WithSharedResults(),
		fallback.WithStore(rs[2].Store.Results(), store.WithTimeout(calm), store.WithOnError(onErr))))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c(ctx, args)
	if m, orig, ok := fallback.Parse(res); err != nil || !ok || m.Source != fallback.SourceLastGood || orig.Content != "rate 1" {
		t.Fatalf("c's fallback: %q, %v; want a's result, marked", res.Content, err)
	}
	if n := tool.execs.Load(); n != 2 {
		t.Errorf("%d executions, want 2 (a's miss, c's failed call)", n)
	}
}

// TestResultsRedisDown: with redis-server killed or stalled, a cache's
// calls miss within the store timeout (fail open: the tool is called),
// marked degraded and reported; none waits for Redis.
func TestResultsRedisDown(t *testing.T) {
	for _, mode := range []string{"killed", "stalled"} {
		t.Run(mode, func(t *testing.T) {
			noLeaks(t)
			srv := startRedis(t)
			r := newReplica(t, srv)
			var tool rateTool
			var reports atomic.Int64
			var degraded atomic.Int64
			note := func(next toolmw.Tool) toolmw.Tool {
				return func(ctx context.Context, a json.RawMessage) (toolmw.Result, error) {
					res, err := next(ctx, a)
					if c, _ := toolmw.CallFrom(ctx); c.Degraded == "cache" {
						degraded.Add(1)
					}
					return res, err
				}
			}
			w, err := toolmw.Wrap(ratesSpec, tool.tool, note, cache.New(time.Minute, cache.WithSharedResults(),
				cache.WithStore(r.Store.Results(), store.WithTimeout(storeTimeout), store.WithOnError(func(e store.Error) {
					if e.Layer != "cache" || e.Refused {
						t.Errorf("reported %+v", e)
					}
					reports.Add(1)
				}))))
			if err != nil {
				t.Fatal(err)
			}
			warm(t, func(try int) error {
				_, err := w(context.Background(), json.RawMessage(fmt.Sprint(-1-try)))
				return err
			})
			switch mode {
			case "killed":
				srv.Kill()
			case "stalled":
				resume := srv.Stall()
				defer func() {
					if err := resume(); err != nil {
						t.Errorf("resume redis-server: %v", err)
					}
				}()
			}
			execs, reportsBefore, degradedBefore := tool.execs.Load(), reports.Load(), degraded.Load()
			for i := range 5 {
				ctx, cancel := context.WithTimeout(context.Background(), stalledCallTimeout)
				start := time.Now()
				res, err := w(ctx, json.RawMessage(fmt.Sprint(i)))
				took := time.Since(start)
				cancel()
				if err != nil || !strings.HasPrefix(res.Content, "rate ") {
					t.Errorf("call %d: %q, %v; want the tool's result", i, res.Content, err)
				}
				if took > storeTimeout+loadSlack {
					t.Errorf("call %d took %v, want at most the store timeout, %v (+ %v for a loaded machine)", i, took, storeTimeout, loadSlack)
				}
			}
			if n := tool.execs.Load() - execs; n != 5 {
				t.Errorf("%d executions of 5 calls of new arguments", n)
			}
			if n := degraded.Load() - degradedBefore; n != 5 {
				t.Errorf("%d calls marked degraded, want 5", n)
			}
			if n := reports.Load() - reportsBefore; n < 5 {
				t.Errorf("%d store errors reported, want one per call at least", n)
			}
		})
	}
}
