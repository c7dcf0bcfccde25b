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
	"github.com/toolmw/toolmw/middleware/dedupe"
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

// Two replicas keep their call records in one SQLite file: the run resumed
// on the second gets the outcome of the call the first made, and the
// payment is made once.
func ExampleStore_CallRecords() {
	dir, err := os.MkdirTemp("", "calls")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dsn := "file:" + filepath.Join(dir, "calls.db") + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)"
	key := []byte("a secret of at least 32 bytes, kept out of the code")

	charges := 0
	pay := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		charges++
		return toolmw.Text(fmt.Sprintf("charge #%d accepted", charges)), nil
	}
	replica := func(db *sql.DB) toolmw.Tool { // a process: its own *sql.DB and layer
		st, err := sqlstore.New(db)
		if err != nil {
			log.Fatal(err)
		}
		if err := st.CreateTables(context.Background()); err != nil {
			log.Fatal(err)
		}
		once := dedupe.New(dedupe.WithStore(st.CallRecords(), store.WithTimeout(2*time.Second)),
			dedupe.WithSealKey(key)) // the same key in every process
		return toolmw.MustWrap(toolmw.Spec{Name: "pay", Description: "Pays."}, pay, once)
	}
	call := func(tool toolmw.Tool) {
		ctx := budget.WithRun(context.Background(), budget.WithID("run-2f6c"))
		res, err := tool(toolmw.WithCallID(ctx, "call_7"), json.RawMessage(`{"amount":10}`))
		fmt.Println(res.Content, err)
	}
	for _, what := range []string{"the first replica makes the call, then crashes", "the run resumes on the second"} {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(what, ": ")
		call(replica(db))
		db.Close()
	}
	fmt.Println("charges:", charges)
	// Output:
	// the first replica makes the call, then crashes: charge #1 accepted <nil>
	// the run resumes on the second: charge #1 accepted <nil>
	// charges: 1
}
