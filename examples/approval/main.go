// Command approval is an agent loop that pauses for a person: the model's
// call of cancel_booking waits for a y/n on the terminal, and the decision
// is kept in SQLite, so the loop may be stopped while it waits and resumes
// where it was when it is started again with the same run id.
//
// The model is scripted and the bookings live in the same SQLite file, so
// the program needs no network:
//
//	go run . -db /tmp/approvals.db -run run-1      # asks, and waits for y or n
//	^C                                             # stop it before answering
//	go run . -db /tmp/approvals.db -run run-1      # asks the same request again
//
// What makes the restart work: the run has an id (budget.WithID), so the
// call's idempotency key, and with it the approval id, is the same in
// every process; the Desk finds the request the first process filed, and
// an approval is used by exactly one execution. The key that seals the
// rows is kept beside the database (-db + ".key") for the example's sake;
// a real deployment keeps it in its secret store.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite"

	"github.com/toolmw/toolmw"
	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The bounds of the loop.
const (
	maxTurns = 8 // model turns in one run
	maxAsks  = 3 // questions for one request before the loop gives up on the reviewer
	// approvalTTL is how long a yes stands unused: the loop uses it at
	// once, so a short one is enough.
	approvalTTL = 10 * time.Minute
	maxAnswer   = 64 // bytes of a reviewer's answer that are read
)

// exitNoAnswer is the exit status when the reviewer gave no answer (end of
// input): the request waits, and a run with the same id asks it again.
const exitNoAnswer = 3

func main() {
	dbPath := flag.String("db", "approvals.db", "the SQLite file holding the bookings and the approval decisions")
	runID := flag.String("run", "run-1", "the run's id: run again with the same id to resume")
	flag.Parse()
	os.Exit(run(context.Background(), *dbPath, *runID, os.Stdin, os.Stdout))
}

// run runs the loop and returns the process's exit status.
func run(ctx context.Context, dbPath, runID string, in io.Reader, out io.Writer) int {
	app, err := open(ctx, dbPath)
	if err != nil {
		fmt.Fprintln(out, "error:", err)
		return 1
	}
	defer app.Close()
	answer, err := app.Loop(ctx, runID, &Terminal{In: bufio.NewReader(in), Out: out}, out)
	switch {
	case errors.Is(err, ErrNoAnswer):
		fmt.Fprintln(out, "no answer: the request waits; run again with -run", runID, "to answer it")
		return exitNoAnswer
	case err != nil:
		fmt.Fprintln(out, "error:", err)
		return 1
	}
	fmt.Fprintln(out, "model:", answer)
	return 0
}

// App is the example's world: the SQLite database with the bookings, the
// approval Desk over the same database, and the toolbox.
type App struct {
	db   *sql.DB
	desk *approval.Desk
	box  *toolmw.Toolbox
}

// open opens (or creates) the database at path.
func open(ctx context.Context, path string) (*App, error) {
	// A busy timeout: another process using the file makes a writer wait
	// rather than fail.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)")
	if err != nil {
		return nil, err
	}
	app, err := setUp(ctx, db, path+".key")
	if err != nil {
		db.Close()
		return nil, err
	}
	return app, nil
}

// storeTimeout bounds each operation of the approval layer on the
// database, as long as the busy timeout: another process's write holds
// the file's lock for a moment, and a loaded machine's disk takes more
// than store.DefaultTimeout (50 ms) now and then. Past it the call fails
// closed (approval_store_failed, nothing runs).
const storeTimeout = 5 * time.Second

func setUp(ctx context.Context, db *sql.DB, keyPath string) (*App, error) {
	decisions, err := sqlstore.New(db)
	if err != nil {
		return nil, err
	}
	if err := decisions.CreateTables(ctx); err != nil {
		return nil, err
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS bookings (id TEXT PRIMARY KEY, status TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS cancellations (booking TEXT NOT NULL, at TEXT NOT NULL)`,
		`INSERT INTO bookings (id, status) VALUES ('BK-1042', 'confirmed') ON CONFLICT DO NOTHING`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	key, err := loadKey(keyPath)
	if err != nil {
		return nil, err
	}
	opts := []approval.Option{approval.WithStore(decisions, store.WithTimeout(storeTimeout)), approval.WithSealKey(key)}
	if err := approval.Validate(opts...); err != nil {
		return nil, err
	}
	desk := approval.NewDesk(opts...)
	app := &App{db: db, desk: desk}
	// The approval layer goes outermost: an approval allows one execution.
	app.box = toolmw.NewToolbox(desk.Middleware(approval.Tools("cancel_booking")))
	if err := app.box.Register(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking. Needs a person's approval."},
		toolmw.Typed(app.cancelBooking)); err != nil {
		return nil, err
	}
	if err := app.box.Register(toolmw.Spec{Name: "get_booking", Description: "Reads a booking.", Idempotent: true},
		toolmw.Typed(app.getBooking)); err != nil {
		return nil, err
	}
	return app, nil
}

// loadKey reads the sealing key at path, making a random one on the first
// run.
func loadKey(path string) ([]byte, error) {
	key, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key = make([]byte, approval.MinKeyLen)
		_, _ = rand.Read(key)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) { // another process made it first
			return os.ReadFile(path)
		}
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(key); err != nil {
			f.Close()
			return nil, err
		}
		return key, f.Close()
	}
	return key, err
}

// Close closes the database.
func (a *App) Close() error { return a.db.Close() }

// Booking names a booking.
type Booking struct {
	ID string `json:"booking"`
}

func (a *App) cancelBooking(ctx context.Context, in Booking) (string, error) {
	res, err := a.db.ExecContext(ctx, `UPDATE bookings SET status = 'cancelled' WHERE id = ? AND status = 'confirmed'`, in.ID)
	if err != nil {
		return "", err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return "", taxonomy.Refusal("booking_not_cancellable", "the booking is not confirmed, or does not exist")
	}
	// The audit trail: one row per execution.
	if _, err := a.db.ExecContext(ctx, `INSERT INTO cancellations (booking, at) VALUES (?, ?)`, in.ID, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		return "", err
	}
	return "booking " + in.ID + " cancelled", nil
}

func (a *App) getBooking(ctx context.Context, in Booking) (string, error) {
	var status string
	err := a.db.QueryRowContext(ctx, `SELECT status FROM bookings WHERE id = ?`, in.ID).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", taxonomy.Refusal("booking_not_found", "no such booking")
	}
	return "booking " + in.ID + " is " + status, err
}

// Reviewer decides approval requests.
type Reviewer interface {
	// Review returns true to approve req and false to deny it, or
	// ErrNoAnswer when it cannot answer now.
	Review(req approval.Request) (bool, error)
}

// ErrNoAnswer: the reviewer gave no answer; the request waits.
var ErrNoAnswer = errors.New("the reviewer gave no answer")

// Terminal asks a person on a terminal: y or n.
type Terminal struct {
	In  *bufio.Reader
	Out io.Writer
}

// Review prints the request and reads y or n, asking at most maxAsks times.
func (t *Terminal) Review(req approval.Request) (bool, error) {
	fmt.Fprintf(t.Out, "approval needed for %s (%s):\n  %s\n", req.Tool, req.ID, req.Summary)
	for range maxAsks {
		fmt.Fprint(t.Out, "approve? [y/n] ")
		line, err := readLine(t.In)
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
		if err != nil {
			return false, ErrNoAnswer
		}
	}
	return false, ErrNoAnswer
}

// readLine reads one line of at most maxAnswer bytes, dropping the rest of
// a longer one.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return string(b), err
		}
		if c == '\n' {
			return string(b), nil
		}
		if len(b) < maxAnswer {
			b = append(b, c)
		}
	}
}

// The scripted model: it checks the booking, asks to cancel it, and
// answers with what the tools told it.
type modelCall struct {
	ID, Name, Args string
}

func modelTurn(turn int, seen []string) (calls []modelCall, answer string) {
	switch turn {
	case 0:
		return []modelCall{{"call_get_1", "get_booking", `{"booking":"BK-1042"}`}}, ""
	case 1:
		return []modelCall{{"call_cancel_1", "cancel_booking", `{"booking":"BK-1042"}`}}, ""
	}
	return nil, "I was told: " + strings.Join(seen, " | ")
}

// Loop runs the scripted model in the run runID. A call that needs
// approval is shown to the reviewer; the decision is recorded on the Desk
// and the call is made again, and only its outcome goes to the model. When
// the reviewer gives no answer, Loop returns ErrNoAnswer: the request
// waits in the store, and a Loop with the same run id asks it again.
func (a *App) Loop(ctx context.Context, runID string, reviewer Reviewer, log io.Writer) (string, error) {
	ctx = budget.WithRun(ctx, budget.WithID(runID))
	var seen []string
	for turn := range maxTurns {
		calls, answer := modelTurn(turn, seen)
		if calls == nil {
			return answer, nil
		}
		seen = seen[:0]
		for _, c := range calls {
			cctx := toolmw.WithCallID(ctx, c.ID)
			res, err := a.box.Call(cctx, c.Name, json.RawMessage(c.Args))
			if info := taxonomy.InfoOf(err); err != nil && info.Kind == taxonomy.KindApprovalPending {
				if err := a.decide(ctx, info.Approval.ID, reviewer); err != nil {
					return "", err
				}
				res, err = a.box.Call(cctx, c.Name, json.RawMessage(c.Args))
			}
			fmt.Fprintf(log, "%s → %s\n", c.Name, outcome(err))
			seen = append(seen, toolmw.ForModel(res, err))
		}
	}
	return "", errors.New("the model did not answer within the turn limit")
}

// decide asks the reviewer about the request id and records the answer.
// A request someone else decided in the meantime is left as it is.
func (a *App) decide(ctx context.Context, id string, reviewer Reviewer) error {
	req, err := a.desk.Get(ctx, id)
	if err != nil {
		return err
	}
	if req.State != approval.StatePending {
		return nil
	}
	yes, err := reviewer.Review(req)
	if err != nil {
		return err
	}
	if yes {
		err = a.desk.Approve(ctx, req, approvalTTL)
	} else {
		err = a.desk.Deny(ctx, req)
	}
	if errors.Is(err, approval.ErrChanged) || errors.Is(err, approval.ErrDecided) {
		return nil // decided elsewhere: the call finds out what
	}
	return err
}

func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	info := taxonomy.InfoOf(err)
	return string(info.Kind) + "/" + info.Code
}
