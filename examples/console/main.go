// Command console runs a small agent loop — a flaky flight search and a
// refund that needs a person's approval — and serves toolmw's console
// beside it: the state page shows the search's breaker, retry budget and
// failures as they change, and the approval desk lists the refund for a
// reviewer to approve or deny.
//
// The model is scripted, so the program needs no network:
//
//	go run ./examples/console
//	# open http://127.0.0.1:8080/debug/toolmw/ and sign in as "reviewer"
//	# with the password the program prints
//
// Each run searches (the supplier fails about half the time, and is down
// for a while every few runs, which trips the breaker), then asks for a
// refund and waits, polling, until a reviewer decides it in the page. The
// runs go on until the program is interrupted (-runs limits them).
package main

import (
	"context"
	crand "crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/console"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

// The example's bounds.
const (
	// Prefix is where the console is mounted.
	Prefix = "/debug/toolmw"
	// Reviewer is the one reviewer's user name (HTTP basic auth).
	Reviewer = "reviewer"
	// maxWait is how long a run waits for the reviewer before it gives
	// the model up on the refund.
	maxWait = 10 * time.Minute
	// pollEvery is how often a waiting run asks again.
	pollEvery = 500 * time.Millisecond
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "where to serve the console")
	runs := flag.Int("runs", 0, "how many runs to make (0: until interrupted)")
	seed := flag.Uint64("seed", 1, "the seed of the supplier's failures")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := serve(ctx, *addr, *runs, *seed, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// serve listens on addr, serves the app and runs the loop runs times (0:
// until ctx ends).
func serve(ctx context.Context, addr string, runs int, seed uint64, out io.Writer) error {
	app, err := NewApp(seed)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintf(out, "console: http://%s%s/ (user %q, password %s)\n", ln.Addr(), Prefix, Reviewer, app.Password)
	for i := 1; runs == 0 || i <= runs; i++ {
		answer, err := app.Run(ctx, fmt.Sprintf("run-%d", i), out)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "run-%d: %s\n", i, answer)
	}
	return nil
}

// App is the example's world: the tools, the approval desk, and the
// failures the state page shows.
type App struct {
	// Password is the reviewer's password, made at random.
	Password string
	Desk     *approval.Desk
	Failures *console.Failures
	// Refunds counts the refunds made: each approval allows one.
	Refunds atomic.Int64

	box      *toolmw.Toolbox
	supplier *supplier
}

// NewApp makes the tools and the console; seed drives the supplier's
// failures.
func NewApp(seed uint64) (*App, error) {
	pw := make([]byte, 12)
	_, _ = crand.Read(pw)
	a := &App{Password: hex.EncodeToString(pw), Desk: approval.NewDesk(), Failures: console.NewFailures(0),
		supplier: &supplier{rnd: rand.New(rand.NewPCG(seed, seed))}}

	// The default stack, with the failures recorded for the page, fast
	// retries and a breaker that trips after four failures in a row.
	stack := middleware.Default(
		middleware.WithEvents(a.Failures),
		middleware.WithRetry(retry.WithBackoff(20*time.Millisecond, 200*time.Millisecond)),
		middleware.WithBreaker(breaker.WithConsecutiveFailures(4), breaker.WithOpenFor(5*time.Second)),
		middleware.WithTimeout(2*time.Second),
	)
	// The approval layer goes outermost: an approval allows one execution.
	a.box = toolmw.NewToolbox(a.Desk.Middleware(approval.Tools("refund_booking")), stack.Middleware())
	if err := a.box.Register(toolmw.Spec{Name: "search_flights", Description: "Finds flights.", Idempotent: true},
		toolmw.Typed(a.supplier.search)); err != nil {
		return nil, err
	}
	if err := a.box.Register(toolmw.Spec{Name: "refund_booking", Description: "Refunds a booking. Needs a person's approval."},
		toolmw.Typed(a.refund)); err != nil {
		return nil, err
	}
	return a, nil
}

// Handler serves the console under Prefix, the approval desk for the one
// reviewer who signs in with the password.
func (a *App) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(Prefix+"/", http.StripPrefix(Prefix, a.signIn(console.New(
		console.WithState(console.WithFailures(a.Failures)),
		console.WithDesk(a.Desk,
			console.WithReviewer(a.reviewer),
			// The one reviewer may decide refunds; a real application asks
			// its own policy.
			console.WithAuthorize(func(reviewer, tool string) bool { return reviewer == Reviewer && tool == "refund_booking" })),
	))))
	mux.Handle("GET /{$}", http.RedirectHandler(Prefix+"/", http.StatusFound))
	return mux
}

// reviewer is who signed in.
func (a *App) reviewer(r *http.Request) (string, bool) {
	user, pw, ok := r.BasicAuth()
	if !ok || user != Reviewer || subtle.ConstantTimeCompare([]byte(pw), []byte(a.Password)) != 1 {
		return "", false
	}
	return user, true
}

// signIn asks the browser for the reviewer's password before anything of
// the console is shown.
func (a *App) signIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := a.reviewer(r); !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="toolmw console", charset="UTF-8"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Run is one agent run: the scripted model searches, then asks for a
// refund and waits for the reviewer's decision.
func (a *App) Run(ctx context.Context, runID string, out io.Writer) (string, error) {
	ctx = budget.WithRun(ctx, budget.WithID(runID), budget.WithToolMaxAttempts("search_flights", 10))
	told, err := a.call(ctx, out, "call_search", "search_flights", `{"from":"LIS","to":"OSL"}`)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(out, "  model reads: %s\n", told)

	wait, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	asked := false
	for {
		res, err := a.box.Call(toolmw.WithCallID(wait, "call_refund"), "refund_booking", json.RawMessage(`{"booking":"BK-1042"}`))
		info := taxonomy.InfoOf(err)
		switch {
		case info.Code == taxonomy.CodeApprovalPending:
			if !asked {
				fmt.Fprintf(out, "%s: refund_booking waits for a reviewer (approval %s)\n", runID, info.Approval.ID)
				asked = true
			}
			select {
			case <-wait.Done():
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				return "no reviewer answered; the refund waits", nil
			case <-time.After(pollEvery):
			}
			continue
		case errors.Is(err, context.Canceled):
			return "", err
		}
		fmt.Fprintf(out, "%s: refund_booking → %s\n", runID, describe(err))
		return toolmw.ForModel(res, err), nil
	}
}

// call makes one tool call and returns what the model is told; only a
// cancelled run is an error.
func (a *App) call(ctx context.Context, out io.Writer, id, name, args string) (string, error) {
	res, err := a.box.Call(toolmw.WithCallID(ctx, id), name, json.RawMessage(args))
	if errors.Is(err, context.Canceled) {
		return "", err
	}
	fmt.Fprintf(out, "%s(%s) → %s\n", name, args, describe(err))
	return toolmw.ForModel(res, err), nil
}

func describe(err error) string {
	if err == nil {
		return "ok"
	}
	info := taxonomy.InfoOf(err)
	return fmt.Sprintf("%s %s/%s", taxonomy.OutcomeOf(err), info.Kind, info.Code)
}

// Booking names a booking.
type Booking struct {
	ID string `json:"booking"`
}

func (a *App) refund(_ context.Context, b Booking) (string, error) {
	a.Refunds.Add(1)
	return "booking " + b.ID + " refunded", nil
}

// Route is a search's question.
type Route struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// supplier is the flaky fare supplier: it fails about half its calls, and
// every fourth run's worth of calls it is down altogether.
type supplier struct {
	mu    sync.Mutex
	rnd   *rand.Rand
	calls int
}

func (s *supplier) search(ctx context.Context, r Route) ([]string, error) {
	s.mu.Lock()
	s.calls++
	down := s.calls%40 >= 30 // ten calls in forty
	fail := down || s.rnd.IntN(2) == 0
	s.mu.Unlock()
	if fail {
		return nil, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the fare supplier did not answer")
	}
	return []string{r.From + "→" + r.To + " 08:10 €120", r.From + "→" + r.To + " 17:45 €95"}, nil
}
