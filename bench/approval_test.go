package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
)

// BenchmarkApproval measures the approval layer (issue 20) on the no-op
// tool:
//
//   - bare: the tool without the layer, the baseline;
//   - unneeded: a call the policy does not name (the cost of asking the
//     policy, ≈ 0 over bare);
//   - approved_memory: a call with a valid approval in the MemoryStore
//     (load, open and check the sealed row, consume its nonce, record the
//     use), the approvals filed and decided outside the timer;
//   - cycle_memory: the whole pause–decide–resume cycle of one call: the
//     pending call, Get, Approve and the approved call.
func BenchmarkApproval(b *testing.B) {
	key := bytes.Repeat([]byte{1}, approval.MinKeyLen)
	newDesk := func() *approval.Desk {
		return approval.NewDesk(approval.WithStore(approval.NewMemoryStore()), approval.WithSealKey(key))
	}
	gated := toolmw.Spec{Name: "cancel_booking"}
	args := json.RawMessage(`{"booking":"BK-1042","reason":"customer asked"}`)
	run := budget.WithRun(context.Background(), budget.WithID("bench_run"))

	b.Run("bare", func(b *testing.B) {
		tool := toolmw.MustWrap(spec, noop)
		benchCalls(b, tool, context.Background())
	})
	b.Run("unneeded", func(b *testing.B) {
		tool := toolmw.MustWrap(spec, noop, newDesk().Middleware(approval.Tools("cancel_booking")))
		benchCalls(b, tool, context.Background())
	})

	// ask files the request of call id and approves it.
	ask := func(b *testing.B, desk *approval.Desk, tool toolmw.Tool, ctx context.Context) {
		_, err := tool(ctx, args)
		info := taxonomy.InfoOf(err)
		if info.Approval == nil {
			b.Fatalf("not pending: %v", err)
		}
		req, err := desk.Get(context.Background(), info.Approval.ID)
		if err == nil {
			err = desk.Approve(context.Background(), req, time.Hour)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.Run("approved_memory", func(b *testing.B) {
		desk := newDesk()
		tool := toolmw.MustWrap(gated, noop, desk.Middleware(approval.Tools("cancel_booking")))
		const chunk = 1024
		ctxs := make([]context.Context, chunk)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if i%chunk == 0 {
				b.StopTimer()
				for j := range ctxs {
					ctxs[j] = toolmw.WithCallID(run, "call_"+strconv.Itoa(i+j))
					ask(b, desk, tool, ctxs[j])
				}
				b.StartTimer()
			}
			res, err := tool(ctxs[i%chunk], args)
			if err != nil {
				b.Fatal(err)
			}
			sink = res
		}
	})
	b.Run("cycle_memory", func(b *testing.B) {
		desk := newDesk()
		tool := toolmw.MustWrap(gated, noop, desk.Middleware(approval.Tools("cancel_booking")))
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			ctx := toolmw.WithCallID(run, "cycle_"+strconv.Itoa(i))
			ask(b, desk, tool, ctx)
			res, err := tool(ctx, args)
			if err != nil {
				b.Fatal(err)
			}
			sink = res
		}
	})
}

func benchCalls(b *testing.B, tool toolmw.Tool, ctx context.Context) {
	b.ReportAllocs()
	for b.Loop() {
		res, err := tool(ctx, benchArgs)
		if err != nil {
			b.Fatal(err)
		}
		sink = res
	}
}
