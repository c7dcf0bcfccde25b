package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"

	"github.com/toolmw/toolmw"
	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// A call that needs approval waits in SQLite for a reviewer; approved, it
// runs once.
func Example() {
	dir, err := os.MkdirTemp("", "approvals")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "approvals.db")+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ctx := context.Background()
	st, err := sqlstore.New(db)
	if err != nil {
		log.Fatal(err)
	}
	if err := st.CreateTables(ctx); err != nil {
		log.Fatal(err)
	}
	key := []byte("a secret of at least 32 bytes, kept out of the code")
	desk := approval.NewDesk(approval.WithStore(st, store.WithTimeout(2*time.Second)), approval.WithSealKey(key))
	cancel := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."},
		func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			fmt.Println("cancelling", string(args))
			return toolmw.Text("cancelled"), nil
		}, desk.Middleware(approval.Tools("cancel_booking")))

	// The run's id keeps the approval id the same when the loop restarts.
	run := budget.WithRun(ctx, budget.WithID("run-42"))
	call := toolmw.WithCallID(run, "call_1")
	args := json.RawMessage(`{"booking":"B-1"}`)

	_, err = cancel(call, args)
	info := taxonomy.InfoOf(err)
	fmt.Println(info.Kind, info.Approval.Summary)

	req, err := desk.Get(ctx, info.Approval.ID)
	if err != nil {
		log.Fatal(err)
	}
	if err := desk.Approve(ctx, req, time.Hour); err != nil {
		log.Fatal(err)
	}
	res, err := cancel(call, args)
	fmt.Println(res.Content, err)
	_, err = cancel(call, args)
	fmt.Println(taxonomy.InfoOf(err).Code)
	// Output:
	// approval-pending cancel_booking {"booking":"B-1"}
	// cancelling {"booking":"B-1"}
	// cancelled <nil>
	// approval_replayed
}
