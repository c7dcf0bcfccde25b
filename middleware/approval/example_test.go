package approval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The pause–decide–resume cycle: the call waits for a person, a reviewer
// reads and approves it, the loop makes the same call again and it runs,
// once.
func Example() {
	// One key for every process sharing the store; from a secret manager.
	key := bytes.Repeat([]byte{7}, approval.MinKeyLen)
	// The store and how the Desk uses it: a shared store in production.
	desk := approval.NewDesk(approval.WithStore(approval.NewMemoryStore(), store.WithTimeout(100*time.Millisecond)),
		approval.WithSealKey(key))

	cancel := func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("booking cancelled"), nil
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, cancel, desk.Middleware(approval.Tools("cancel_booking")))

	// The loop's run and the model's call id name the call.
	ctx := toolmw.WithCallID(budget.WithRun(context.Background(), budget.WithID("run_42")), "call_7")
	args := json.RawMessage(`{"booking":"BK-1042","contact":"jane@example.com"}`)

	_, err := tool(ctx, args)
	info := taxonomy.InfoOf(err)
	fmt.Println(info.Kind, info.Code)

	// The reviewer's side, in this process or another.
	req, _ := desk.Get(context.Background(), info.Approval.ID)
	fmt.Println(req.State, req.Summary)
	if err := desk.Approve(context.Background(), req, time.Hour); err != nil {
		fmt.Println(err)
	}

	res, err := tool(ctx, args)
	fmt.Println(res.Content, err)

	_, err = tool(ctx, args)
	fmt.Println(taxonomy.InfoOf(err).Code)
	// Output:
	// approval-pending approval_pending
	// pending cancel_booking {"booking":"BK-1042","contact":"[REDACTED:email]"}
	// booking cancelled <nil>
	// approval_replayed
}
