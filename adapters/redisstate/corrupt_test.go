package redisstate_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/store"
)

// TestBreakerCorruptState: a breaker's hash on Redis whose fields do not
// parse (a state other than 0, 1 or 2, a count or a time that is not a
// decimal integer below 2^53) or a key of another type is corrupt: every
// operation of the Store fails with store.ErrCorrupt, and the layer reports it and decides on its
// local breaker, as when Redis fails. It used to read as a closed breaker
// with no failure, silently (an open breaker set to "garbage" let every
// replica through to the dead dependency without a word).
func TestBreakerCorruptState(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	r := newReplica(t, srv)
	st := r.Store.Breakers()
	ctx := context.Background()
	key := "toolmw:cb:" + hashed("search")
	corrupt := map[string]func() error{
		"a string key": func() error { return r.Client.Set(ctx, key, "2", 0).Err() },
	}
	for _, field := range []string{"s", "f", "u", "p", "le"} {
		for _, v := range corruptions {
			corrupt[field+"="+v] = func() error { return r.Client.HSet(ctx, key, field, v).Err() }
		}
	}
	corrupt["s=3"] = func() error { return r.Client.HSet(ctx, key, "s", "3").Err() }
	for name, write := range corrupt {
		t.Run(name, func(t *testing.T) {
			r.Client.Del(ctx, key)
			if _, err := st.Report(ctx, "search", breaker.Report{Outcome: breaker.OutcomeFault, Trip: true, Failures: 1, OpenFor: time.Minute}); err != nil {
				t.Fatal(err)
			}
			if err := write(); err != nil {
				t.Fatal(err)
			}
			if snap, err := st.Load(ctx, "search"); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Load of a corrupt breaker: %+v, %v; want store.ErrCorrupt", snap, err)
			}
			if _, _, err := st.Acquire(ctx, "search", breaker.Lease{Token: "t", TTL: time.Second}); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Acquire of a corrupt breaker: %v, want store.ErrCorrupt", err)
			}
			if _, err := st.Report(ctx, "search", breaker.Report{Outcome: breaker.OutcomeSuccess}); !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Report to a corrupt breaker: %v, want store.ErrCorrupt", err)
			}
			var mu sync.Mutex
			var reports []error
			s := &supplier{}
			tool := mustWrap(t, "search", s.tool, breaker.New(breaker.WithStore(st, store.WithTimeout(calm),
				store.WithOnError(func(e store.Error) { mu.Lock(); reports = append(reports, e.Err); mu.Unlock() }))))
			if _, err := tool(ctx, nil); err != nil {
				t.Fatalf("a call decided on the local breaker: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reports) == 0 || !errors.Is(reports[0], store.ErrCorrupt) {
				t.Fatalf("reports %v, want the corrupt state reported", reports)
			}
		})
	}
}

// TestRateLimitCorruptState: a rate limit's key on Redis that does not
// hold a time (garbage, a sign, a space, an exponent, hex, inf) is corrupt:
// Admit fails with store.ErrCorrupt, and the layer reports it and decides on its local limiter,
// as when Redis fails. It used to read as a full bucket, silently.
func TestRateLimitCorruptState(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	r := newReplica(t, srv)
	ctx := context.Background()
	key := "toolmw:rl:" + hashed("search")
	for _, v := range []string{"garbage", "", "-1", " 5", "5 ", "+5", "1e3", "0x10", "inf", "nan", "1.5.5", ".5", "5."} {
		t.Run(v, func(t *testing.T) {
			r.Client.Del(ctx, key)
			var mu sync.Mutex
			var reports []error
			c := &counted{}
			tool := mustWrap(t, "search", c.tool, ratelimit.New(rate.Every(time.Minute), 1, ratelimit.WithReject(),
				ratelimit.WithStore(r.Store.RateLimits(), store.WithTimeout(calm),
					store.WithOnError(func(e store.Error) { mu.Lock(); reports = append(reports, e.Err); mu.Unlock() }))))
			if _, err := tool(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if err := r.Client.Set(ctx, key, v, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			_, err := r.Store.RateLimits().Admit(ctx, ratelimit.Request{Key: "search", Interval: time.Minute, Burst: 1})
			if !errors.Is(err, store.ErrCorrupt) {
				t.Fatalf("Admit on %q: %v, want store.ErrCorrupt", v, err)
			}
			tool(ctx, nil) // decided locally
			mu.Lock()
			defer mu.Unlock()
			if len(reports) == 0 || !errors.Is(reports[0], store.ErrCorrupt) {
				t.Fatalf("reports %v, want the corrupt state reported", reports)
			}
		})
	}
}
