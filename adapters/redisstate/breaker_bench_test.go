package redisstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/sony/gobreaker/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/store"
)

// The shared breaker's benchmarks, against a real redis-server on
// 127.0.0.1 (see server_test.go). Each reports round trips per call
// (roundtrips/op), counted by a go-redis hook on the replica's client.
//
//	go test -run '^$' -bench Breaker -benchtime=2000x -count 3 .

// benchCalls calls tool b.N times and reports the replica's round trips
// per call.
func benchCalls(b *testing.B, r *replica, tool toolmw.Tool, wantErr bool) {
	ctx := context.Background()
	if _, err := tool(ctx, nil); (err != nil) != wantErr { // warms the cache and the script
		b.Fatal(err)
	}
	var start int64
	if r != nil {
		start = r.RoundTrips.n.Load()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := tool(ctx, nil); (err != nil) != wantErr {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if r != nil {
		b.ReportMetric(float64(r.RoundTrips.n.Load()-start)/float64(b.N), "roundtrips/op")
	}
}

// BenchmarkBreakerShared: a successful call through a breaker on Redis,
// its state cached (hit: the closed state read within the cache period,
// no round trip) or read on every call (miss: a cache period of a
// nanosecond, one round trip); a failing call (one write, the breaker
// never opening); and the in-process breaker for comparison.
func BenchmarkBreakerShared(b *testing.B) {
	srv := startRedis(b)
	fault := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, errors.New("supplier down")
	}
	for _, c := range []struct {
		name    string
		tool    toolmw.Tool
		opts    []breaker.Option
		shared  bool
		wantErr bool
	}{
		{"local", okTool, nil, false, false},
		{"cache_hit", okTool, []breaker.Option{breaker.WithCachePeriod(time.Hour)}, true, false},
		{"cache_miss", okTool, []breaker.Option{breaker.WithCachePeriod(time.Nanosecond)}, true, false},
		{"fault", fault, []breaker.Option{breaker.WithCachePeriod(time.Hour), breaker.WithConsecutiveFailures(1 << 30)}, true, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var r *replica
			opts := c.opts
			if c.shared {
				r = newReplica(b, srv)
				opts = append([]breaker.Option{breaker.WithStore(r.Store.Breakers(), store.WithTimeout(time.Second),
					store.WithOnError(func(e store.Error) { b.Errorf("fell back: %v", e.Err) }))}, opts...)
			}
			tool := mustWrap(b, "search-"+c.name, c.tool, breaker.New(opts...))
			benchCalls(b, r, tool, c.wantErr)
		})
	}
}

// gobreakerStore is gobreaker's SharedDataStore on go-redis, as its
// documentation's example builds it: the lock is a key set if absent, with
// an expiry; gobreaker retries a lock it cannot take every 500 ms.
type gobreakerStore struct{ c *redis.Client }

var errLocked = errors.New("locked")

func (s gobreakerStore) Lock(name string) error {
	ok, err := s.c.SetNX(context.Background(), name, "1", 5*time.Second).Result()
	if err == nil && !ok {
		err = errLocked
	}
	return err
}

func (s gobreakerStore) Unlock(name string) error { return s.c.Del(context.Background(), name).Err() }

func (s gobreakerStore) GetData(name string) ([]byte, error) {
	data, err := s.c.Get(context.Background(), name).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return data, err
}

func (s gobreakerStore) SetData(name string, data []byte) error {
	return s.c.Set(context.Background(), name, data, 0).Err()
}

// BenchmarkBreakerFourCalls: four concurrent 200 ms calls, one from each
// of four replicas, through the shared breaker: toolmw's (no lock across a
// call) and gobreaker v2's DistributedCircuitBreaker (which holds its
// store lock across the call), in the same run on the same server. It
// reports when each call finished (first_s … fourth_s, seconds after they
// started, mean over b.N rounds) and the round trips per call.
func BenchmarkBreakerFourCalls(b *testing.B) {
	const work = 200 * time.Millisecond
	srv := startRedis(b)
	slow := func() (toolmw.Result, error) {
		time.Sleep(work)
		return toolmw.Text("ok"), nil
	}
	run := func(b *testing.B, rs []*replica, calls []func() error) {
		b.Helper()
		var ends [4]time.Duration
		var trips int64
		for _, call := range calls { // connections made, scripts loaded, state read
			if err := call(); err != nil {
				b.Fatal(err)
			}
		}
		for b.Loop() {
			for _, r := range rs {
				trips -= r.RoundTrips.n.Load()
			}
			start := time.Now()
			var wg sync.WaitGroup
			var mu sync.Mutex
			var round []time.Duration
			for _, call := range calls {
				wg.Go(func() {
					if err := call(); err != nil {
						b.Error(err)
					}
					mu.Lock()
					round = append(round, time.Since(start))
					mu.Unlock()
				})
			}
			wg.Wait()
			slices.Sort(round)
			for i, d := range round {
				ends[i] += d
			}
			for _, r := range rs {
				trips += r.RoundTrips.n.Load()
			}
		}
		for i, name := range []string{"first_s", "second_s", "third_s", "fourth_s"} {
			b.ReportMetric((ends[i] / time.Duration(b.N)).Seconds(), name)
		}
		b.ReportMetric(float64(trips)/float64(4*b.N), "roundtrips/op")
	}
	b.Run("toolmw", func(b *testing.B) {
		rs := newReplicas(b, srv, 4)
		var calls []func() error
		for _, r := range rs {
			tool := mustWrap(b, "search", func(context.Context, json.RawMessage) (toolmw.Result, error) { return slow() },
				breaker.New(breaker.WithStore(r.Store.Breakers(), store.WithTimeout(time.Second))))
			calls = append(calls, func() error { _, err := tool(context.Background(), nil); return err })
		}
		run(b, rs, calls)
	})
	b.Run("gobreaker_distributed", func(b *testing.B) {
		rs := newReplicas(b, srv, 4)
		var calls []func() error
		for _, r := range rs {
			cb, err := gobreaker.NewDistributedCircuitBreaker[toolmw.Result](gobreakerStore{r.Client}, gobreaker.Settings{Name: "search"})
			if err != nil {
				b.Fatal(err)
			}
			calls = append(calls, func() error { _, err := cb.Execute(slow); return err })
		}
		run(b, rs, calls)
	})
}
