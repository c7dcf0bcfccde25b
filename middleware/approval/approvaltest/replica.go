package approvaltest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// Replica is one process's view of the approval cycle over a store: a Desk
// over it, and a cancel_booking tool behind the Desk's layer that counts
// its executions. Replicas made over stores that share their backing
// store (two connections, two clients) stand for two processes. A Replica
// is safe for concurrent use.
type Replica struct {
	Desk  *approval.Desk
	tool  toolmw.Tool
	runs  *atomic.Int64
	clock *clock.Fake
}

// Timeout is the store timeout of the Desks the kit makes, unless
// NewReplica is given another: long, so that a loaded machine does not
// turn a race into timeouts.
const Timeout = time.Minute

// NewReplica returns a Replica over s whose Desk seals rows with key and
// uses s with store timeout [Timeout], then opts (store.WithTimeout,
// store.WithOnError). Replicas given the same runs count their executions
// together. Its Desk's clock is fake, set to now: see [Replica.Rest].
func NewReplica(s approval.Store, key []byte, runs *atomic.Int64, opts ...store.Option) *Replica {
	clk := clock.NewFake(time.Now())
	desk := approval.NewDesk(approval.WithStore(s, append([]store.Option{store.WithTimeout(Timeout)}, opts...)...),
		approval.WithSealKey(key), approval.WithClock(clk))
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."},
		func(context.Context, json.RawMessage) (toolmw.Result, error) {
			runs.Add(1)
			return toolmw.Text("cancelled"), nil
		}, desk.Middleware(approval.Tools("cancel_booking")))
	return &Replica{Desk: desk, tool: tool, runs: runs, clock: clk}
}

// Rest lets the rest of r's store pass on r's clock: after a failure the
// Desk leaves its store alone for store.Rest, and its calls fail closed at
// once meanwhile.
func (r *Replica) Rest() { r.clock.Advance(store.Rest) }

// Call makes the model's call callID of the run named "run-replicas".
func (r *Replica) Call(callID string) error {
	ctx := budget.WithRun(context.Background(), budget.WithID("run-replicas"))
	_, err := r.tool(toolmw.WithCallID(ctx, callID), json.RawMessage(`{"booking":"B-7"}`))
	return err
}

// Approve files callID's request through r and approves it for an hour; it
// fails tb when the call does not end approval-pending.
func (r *Replica) Approve(tb testing.TB, callID string) {
	tb.Helper()
	err := r.Call(callID)
	if c := taxonomy.InfoOf(err).Code; c != taxonomy.CodeApprovalPending {
		tb.Fatalf("the first call: %v (%s), want approval_pending", err, c)
	}
	ctx := context.Background()
	req, err := r.Desk.Get(ctx, taxonomy.InfoOf(err).Approval.ID)
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.Desk.Approve(ctx, req, time.Hour); err != nil {
		tb.Fatal(err)
	}
}

// TestReplicasRace checks that two replicas, a and b, racing to execute one
// approved call (16 callers, half on each, in 5 rounds) run it exactly
// once, every other caller refused as approval_replayed.
func TestReplicasRace(t *testing.T, a, b *Replica) {
	t.Helper()
	const callers, rounds = 16, 5
	executions := func() int64 {
		if a.runs == b.runs {
			return a.runs.Load()
		}
		return a.runs.Load() + b.runs.Load()
	}
	for round := range rounds {
		callID := fmt.Sprintf("call_race_%d", round)
		a.Approve(t, callID)
		before := executions()
		var ok, replayed atomic.Int64
		var mu sync.Mutex
		var other []error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range callers {
			r := a
			if i%2 == 1 {
				r = b
			}
			wg.Go(func() {
				<-start
				err := r.Call(callID)
				switch {
				case err == nil:
					ok.Add(1)
				case taxonomy.InfoOf(err).Code == taxonomy.CodeApprovalReplayed:
					replayed.Add(1)
				default:
					mu.Lock()
					other = append(other, err)
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		runs := executions() - before
		if runs != 1 || ok.Load() != 1 || replayed.Load() != callers-1 || len(other) != 0 {
			t.Fatalf("round %d: %d executions, %d successes, %d replayed, others %v; want 1, 1, %d, none",
				round, runs, ok.Load(), replayed.Load(), other, callers-1)
		}
	}
}
