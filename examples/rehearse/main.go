// Command rehearse is an agent loop whose tools are configured from a
// policy file (package policy), reloaded while it runs, and rehearsed
// against injected failures (middleware/chaos): 429s with a Retry-After,
// timeouts, and a supplier down long enough to open the breaker. Its tests
// run the loop under each and check that every run ends within its run
// budget, with a typed stop or an answer.
//
// The model is scripted and the tools are local, so the program needs no
// network:
//
//	go run ./examples/rehearse                          # policies from policy.json
//	go run ./examples/rehearse -chaos 0.3               # 30% of the search's attempts fail
//	go run ./examples/rehearse -policy my.json -runs 20 # edit my.json while it runs
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/policy"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// RunAttempts is each run's budget of tool attempts, all tools together.
const RunAttempts = 12

// MaxTurns bounds the model turns of one run.
const MaxTurns = 10

func main() {
	path := flag.String("policy", "examples/rehearse/policy.json", "the policy file, reloaded when it changes")
	rate := flag.Float64("chaos", 0, "the share of search attempts that fail on purpose (0: none)")
	runs := flag.Int("runs", 3, "how many runs to make")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *path, *rate, *runs, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string, rate float64, runs int, out io.Writer) error {
	set, err := policy.Load(path, policy.WithEnv("REHEARSE_POLICY"))
	if err != nil {
		return err // policy: <file>:<line>: <field>: <why>
	}
	go set.Watch(ctx, time.Second, func(err error) { fmt.Fprintln(out, "policy not reloaded:", err) })
	var o Options
	if rate > 0 {
		o.Faults = Rehearsal(rate)
	}
	box, err := NewBox(set, o)
	if err != nil {
		return err
	}
	for i := 1; i <= runs; i++ {
		ctx := budget.WithRun(ctx, budget.WithID(fmt.Sprintf("run-%d", i)), budget.WithMaxAttempts(RunAttempts))
		if rate > 0 {
			ctx = chaos.Enable(ctx) // this run rehearses
		}
		answer, err := Loop(ctx, box, NewTripModel())
		switch {
		case err != nil:
			fmt.Fprintf(out, "run-%d stopped: %v\n", i, err)
		default:
			fmt.Fprintf(out, "run-%d: %s\n", i, answer)
		}
	}
	return nil
}

// Rehearsal is the chaos of the example: of the search's attempts, a share
// rate fail, half of them with a 429 (rate-limited, Retry-After 1s), half
// by timing out after 1.5 s.
func Rehearsal(rate float64) []chaos.Option {
	throttled := taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited, "too many requests").
		WithRetryAfter(time.Second)
	return []chaos.Option{
		chaos.WithFault(chaos.Failure(throttled), rate/2, "search_flights"),
		chaos.WithFault(chaos.Timeout(1500*time.Millisecond), rate/2, "search_flights"),
	}
}

// Options are what NewBox adds to the policies.
type Options struct {
	// Faults, when given, put a chaos layer next to the tools, off until
	// a run's context enables it (chaos.Enable).
	Faults []chaos.Option
	// Observe are layers put just outside the chaos layer and inside
	// every other: they see each attempt as the tool would have.
	Observe []toolmw.Middleware
}

// NewBox registers the tools under the default stack with the policy
// layer in place of its retry, breaker, rate limit and timeout layers:
//
//	tracing → logging → events → policy → recovery → redact → classify → [observe] → [chaos] → tool
func NewBox(set *policy.Set, o Options) (*toolmw.Toolbox, error) {
	stack, err := set.Stack(middleware.Default())
	if err != nil {
		return nil, err
	}
	if len(o.Faults) > 0 {
		if err := chaos.Validate(o.Faults...); err != nil {
			return nil, err
		}
		stack, err = stack.InsertAfter(middleware.Classify, middleware.Layer{Name: middleware.Chaos, Middleware: chaos.New(o.Faults...)})
		if err != nil {
			return nil, err
		}
	}
	for i := len(o.Observe) - 1; i >= 0; i-- { // each goes in right after classify
		stack, err = stack.InsertAfter(middleware.Classify, middleware.Layer{Name: fmt.Sprintf("observe%d", i+1), Middleware: o.Observe[i]})
		if err != nil {
			return nil, err
		}
	}
	box := toolmw.NewToolbox(stack.Middleware())
	if err := box.Register(toolmw.Spec{Name: "search_flights", Description: "Finds flights.", Idempotent: true},
		toolmw.Typed(searchFlights)); err != nil {
		return nil, err
	}
	if err := box.Register(toolmw.Spec{Name: "book_flight", Description: "Books a flight."},
		toolmw.Typed(bookFlight)); err != nil {
		return nil, err
	}
	return box, nil
}

// Route is a search's question.
type Route struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func searchFlights(_ context.Context, r Route) ([]string, error) {
	return []string{r.From + "→" + r.To + " 08:10 €120", r.From + "→" + r.To + " 17:45 €95"}, nil
}

// Flight names a flight to book.
type Flight struct {
	Flight string `json:"flight"`
}

func bookFlight(_ context.Context, f Flight) (string, error) {
	return "booked " + f.Flight, nil
}

// Model is what the loop asks: given what it was told of its last calls
// (nil on the first turn), the next calls, or a final answer.
type Model interface {
	Reply(told []string) (calls []turn.Call, answer string)
}

// ErrTurnCap is the loop's error when the model did not answer in
// MaxTurns turns.
var ErrTurnCap = errors.New("the model did not answer within the turns allowed")

// Loop runs the model until it answers, the run must stop (run budget
// used up, every circuit open, an approval pending, the context done:
// a *turn.Stop), or MaxTurns pass.
func Loop(ctx context.Context, box *toolmw.Toolbox, m Model) (string, error) {
	var told []string
	for range MaxTurns {
		calls, answer := m.Reply(told)
		if len(calls) == 0 {
			return answer, nil
		}
		answers := turn.Run(ctx, box, calls, turn.Options{})
		if err := turn.StopOf(ctx, answers); err != nil {
			return "", err
		}
		told = told[:0]
		for _, a := range answers {
			told = append(told, a.Text)
		}
	}
	return "", ErrTurnCap
}

// TripModel is the scripted model: it searches until a search succeeds
// (each failure is told to it), books the cheaper flight, and answers.
type TripModel struct {
	n      int
	booked bool
}

// NewTripModel returns a model at the start of its script.
func NewTripModel() *TripModel { return &TripModel{} }

// Reply implements Model.
func (m *TripModel) Reply(told []string) ([]turn.Call, string) {
	m.n++
	search := turn.Call{ID: fmt.Sprintf("call_search_%d", m.n), Name: "search_flights", Args: json.RawMessage(`{"from":"LIS","to":"OSL"}`)}
	switch {
	case told == nil:
		return []turn.Call{search}, ""
	case m.booked:
		return nil, "booked: " + told[0]
	}
	if isError(told[0]) {
		return []turn.Call{search}, "" // the search failed: ask again
	}
	m.booked = true
	return []turn.Call{{ID: fmt.Sprintf("call_book_%d", m.n), Name: "book_flight", Args: json.RawMessage(`{"flight":"17:45"}`)}}, ""
}

// isError reports whether told is a tool error as ForModel shows it.
func isError(told string) bool {
	source, _, ok := toolmw.ParseEnvelope(told)
	return ok && source == "tool_error"
}
