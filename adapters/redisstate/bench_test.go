package redisstate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/store"
)

//go:noinline
func okTool(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Text("ok"), nil
}

// state runs a benchmark with in-process state and with the state on a
// redis-server of its own, and reports the round trips to Redis per op.
func state(b *testing.B, run func(b *testing.B, r *replica)) {
	b.Run("local", func(b *testing.B) { run(b, nil) })
	b.Run("redis", func(b *testing.B) {
		r := newReplica(b, startRedis(b))
		before := r.RoundTrips.n.Load()
		run(b, r)
		b.ReportMetric(float64(r.RoundTrips.n.Load()-before)/float64(b.N), "roundtrips/op")
	})
}

// BenchmarkRateLimit is the cost of one admission: a token is free.
func BenchmarkRateLimit(b *testing.B) {
	state(b, func(b *testing.B, r *replica) {
		var opts []ratelimit.Option
		if r != nil {
			opts = append(opts, ratelimit.WithStore(r.Store.RateLimits()))
		}
		tool := mustWrap(b, "search", okTool, ratelimit.New(1e9, 1<<30, opts...))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tool(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRetryDeposit is the cost a call pays to the retry budget: its
// deposit (batched with Redis).
func BenchmarkRetryDeposit(b *testing.B) {
	state(b, func(b *testing.B, r *replica) {
		var opts []budget.RetryOption
		if r != nil {
			opts = append(opts, budget.WithTokenStore(r.Store.RetryBudget("bench")))
		}
		bk := budget.NewAdaptive(opts...)
		b.ReportAllocs()
		for b.Loop() {
			bk.Deposit()
		}
		b.StopTimer()
		_ = bk.Flush(context.Background())
	})
}

// BenchmarkRetryWithdraw is the cost of a retry's token: a deposit and a
// withdrawal (one round trip with Redis, the deposit sent with it).
func BenchmarkRetryWithdraw(b *testing.B) {
	state(b, func(b *testing.B, r *replica) {
		opts := []budget.RetryOption{budget.WithRatio(1)}
		if r != nil {
			opts = append(opts, budget.WithTokenStore(r.Store.RetryBudget("bench")))
		}
		bk := budget.NewRetry(opts...)
		b.ReportAllocs()
		for b.Loop() {
			bk.Deposit()
			if !bk.TryRetry() {
				b.Fatal("no token")
			}
		}
		b.StopTimer()
		_ = bk.Flush(context.Background())
	})
}

// BenchmarkRunTake is the cost of one attempt's take from a named run.
func BenchmarkRunTake(b *testing.B) {
	state(b, func(b *testing.B, r *replica) {
		opts := []budget.RunOption{budget.WithID("bench-run"), budget.WithMaxAttempts(1 << 40)}
		if r != nil {
			opts = append(opts, budget.WithRunStore(r.Store.Runs()))
		}
		run := budget.NewRun(opts...)
		b.ReportAllocs()
		for b.Loop() {
			if !run.Take("search") {
				b.Fatal("refused")
			}
		}
	})
}

// BenchmarkRunCalls is the cost of one call of a tool limited per run, in
// a named run: one Take (with Redis, one round trip; a call with an effect
// releases nothing).
func BenchmarkRunCalls(b *testing.B) {
	state(b, func(b *testing.B, r *replica) {
		opts := []runlimit.Option{runlimit.Max("search", runlimit.MaxCalls)}
		if r != nil {
			opts = append(opts, runlimit.WithStore(r.Store.RunCalls()))
		}
		tool := mustWrap(b, "search", okTool, runlimit.New(opts...))
		var ctx context.Context
		n := 0
		b.ReportAllocs()
		for b.Loop() {
			if n%runlimit.MaxCalls == 0 { // a new run before the limit is reached
				ctx = budget.WithRun(context.Background(), budget.WithID(fmt.Sprintf("bench-run-%d", n)))
			}
			n++
			if _, err := tool(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSpend is the cost of one call of a costed tool in a named run
// with a spend limit: a reservation and its settlement (with Redis, two
// round trips).
func BenchmarkSpend(b *testing.B) {
	state(b, func(b *testing.B, r *replica) {
		var opts []spend.Option
		if r != nil {
			opts = append(opts, spend.WithStore(r.Store.Spend()))
		}
		tool := mustWrap(b, "search", okTool, spend.New(append(opts, spend.Fixed("search", 1e-6))...))
		ctx := spend.ContextWithLimit(budget.WithRun(context.Background(), budget.WithID("bench-run")), 1e6)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tool(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCallRecords is the cost of one dedupe'd call of a named run,
// through Wrap: in process, a record in memory; on Redis, the call's
// record claimed before the tool runs and finished with its outcome after
// (two round trips; the lease, 15 s, is never renewed by a call this
// short).
func BenchmarkCallRecords(b *testing.B) {
	state(b, func(b *testing.B, r *replica) {
		var opts []dedupe.Option
		if r != nil {
			opts = append(opts, dedupe.WithStore(r.Store.CallRecords(), store.WithTimeout(calm)))
		}
		tool := mustWrap(b, "pay", okTool, dedupe.New(opts...))
		ctx := budget.WithRun(context.Background(), budget.WithID("bench-run"))
		n := 0
		b.ReportAllocs()
		for b.Loop() {
			n++
			if _, err := tool(toolmw.WithCallID(ctx, "call_"+strconv.Itoa(n)), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCallRecordsStore is the Store's part of a dedupe'd call: a
// Claim and a Finish of a new record, straight on the Store (two round
// trips), without the layer.
func BenchmarkCallRecordsStore(b *testing.B) {
	r := newReplica(b, startRedis(b))
	st := r.Store.CallRecords()
	ctx := context.Background()
	outcome := []byte(`{"content":"ok"}`)
	n := 0
	before := r.RoundTrips.n.Load()
	b.ReportAllocs()
	for b.Loop() {
		n++
		now := time.Now()
		c := dedupe.Claim{Op: fmt.Sprintf("%032x", n), Args: fmt.Sprintf("%064x", 0), Now: now, Until: now.Add(dedupe.DefaultLease), Keep: time.Hour}
		key := strconv.Itoa(n)
		if _, err := st.Claim(ctx, "bench-run", key, c); err != nil {
			b.Fatal(err)
		}
		if err := st.Finish(ctx, "bench-run", key, c.Op, outcome, now, time.Hour); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.RoundTrips.n.Load()-before)/float64(b.N), "roundtrips/op")
}
