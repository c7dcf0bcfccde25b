package approval_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/hedge"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestApprovedCallNotHedged: an approval admits one execution. A hedge
// layer inside the approval layer (the order the docs warn against) would
// start a second execution of a slow, approved, idempotent call; the
// approval marks the call single-execution, so hedge runs it once.
func TestApprovedCallNotHedged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		slow := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			n.Add(1)
			select {
			case <-time.After(100 * time.Millisecond):
				return toolmw.Text("cancelled"), nil
			case <-ctx.Done():
				return toolmw.Result{}, ctx.Err()
			}
		}
		desk := approval.NewDesk(approval.WithStore(approval.NewMemoryStore()), approval.WithSealKey(key))
		tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking", Idempotent: true}, slow,
			desk.Middleware(approval.Tools("cancel_booking")), hedge.New(hedge.WithDelay(time.Millisecond)))
		ctx := context.Background()
		_, err := tool(runCtx("call_1"), json.RawMessage(booking))
		id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
		req, err := desk.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := desk.Approve(ctx, req, time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := tool(runCtx("call_1"), json.RawMessage(booking)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := n.Load(); got != 1 {
			t.Fatalf("%d executions of a call its approval admitted once", got)
		}
	})
}
