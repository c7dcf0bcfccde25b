// Command toolerrors walks through toolmw's typed tool errors end to end:
// the taxonomy, the map from foreign errors, and the retry decisions of the
// default stack, one scenario at a time.
//
//	go run ./examples/toolerrors         # a table
//	go run ./examples/toolerrors -json   # one JSON object per scenario
//
// It needs no network (two scenarios call a server it runs on 127.0.0.1)
// and runs in a few seconds.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/permit"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

// Row is one scenario's outcome, as printed.
type Row struct {
	Scenario  string `json:"scenario"`
	Outcome   string `json:"outcome"`
	Kind      string `json:"kind"`
	Code      string `json:"code"`
	Attempts  int    `json:"attempts"`
	ElapsedMS int64  `json:"elapsed_ms"`
	Told      string `json:"told"`
}

// scenario is a tool, the stack around it, and how it is called.
type scenario struct {
	name  string
	about string
	spec  toolmw.Spec
	tool  toolmw.Tool
	stack func(middleware.Stack) (middleware.Stack, error) // varies the demo stack; nil keeps it
	args  string
	ctx   func() (context.Context, context.CancelFunc) // nil: a 2-second deadline
	warm  int                                          // calls made first, not shown

	// server, when set, runs on 127.0.0.1 for the scenario, and the tool is
	// onServer's, given the server's URL and the client to call it with.
	server   http.HandlerFunc
	onServer func(client *http.Client, url string) toolmw.Tool
}

func main() {
	asJSON := flag.Bool("json", false, "print one JSON object per scenario")
	flag.Parse()
	rows, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolerrors:", err)
		os.Exit(1)
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				os.Exit(1)
			}
		}
		return
	}
	printTable(os.Stdout, rows)
}

// demoStack is the default stack with short waits, so the demo is quick.
func demoStack() middleware.Stack {
	return middleware.Default(
		middleware.WithRetry(retry.WithBackoff(10*time.Millisecond, 50*time.Millisecond)),
		middleware.WithTimeout(100*time.Millisecond),
		middleware.WithBreaker(breaker.WithConsecutiveFailures(3), breaker.WithOpenFor(30*time.Second)),
	)
}

func run() ([]Row, error) {
	var rows []Row
	for _, sc := range scenarios() {
		row, err := sc.run()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func (sc scenario) run() (Row, error) {
	if sc.server != nil {
		done := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-done:
			default:
				sc.server(w, r)
			}
		}))
		defer srv.Close()
		defer close(done)
		client := &http.Client{Timeout: 30 * time.Millisecond}
		defer client.CloseIdleConnections()
		sc.tool = sc.onServer(client, srv.URL)
	}
	stack := demoStack()
	if sc.stack != nil {
		var err error
		if stack, err = sc.stack(stack); err != nil {
			return Row{}, err
		}
	}
	// An outermost observer reads how many attempts the call made.
	var attempts int
	stack, err := stack.InsertBefore(middleware.Tracing, middleware.Layer{Name: "observe", Middleware: observe(&attempts)})
	if err != nil {
		return Row{}, err
	}
	tool, err := stack.Wrap(sc.spec, sc.tool)
	if err != nil {
		return Row{}, err
	}
	newCtx := sc.ctx
	if newCtx == nil {
		newCtx = func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 2*time.Second)
		}
	}
	for range sc.warm {
		ctx, cancel := newCtx()
		_, _ = tool(ctx, json.RawMessage(sc.args))
		cancel()
	}
	ctx, cancel := newCtx()
	defer cancel()
	ctx = toolmw.WithCallID(ctx, "call_"+sc.name)
	start := time.Now()
	res, err := tool(ctx, json.RawMessage(sc.args))
	elapsed := time.Since(start)

	row := Row{
		Scenario:  sc.name,
		Outcome:   string(taxonomy.OutcomeOf(err)),
		Attempts:  attempts,
		ElapsedMS: elapsed.Milliseconds(),
		Told:      toolmw.ForModel(res, err),
	}
	if err != nil {
		info := taxonomy.InfoOf(err)
		row.Kind, row.Code = string(info.Kind), info.Code
	}
	return row, nil
}

func observe(attempts *int) toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			call, _ := toolmw.CallFrom(ctx)
			*attempts = call.Attempt
			return res, err
		}
	}
}

// httpError is how an HTTP client library might report a status.
type httpError struct {
	code   int
	header http.Header
}

func (e *httpError) Error() string {
	return fmt.Sprintf("upstream said %d (api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc)", e.code)
}
func (e *httpError) StatusCode() int     { return e.code }
func (e *httpError) Header() http.Header { return e.header }

// get returns a tool that GETs url with client, as a supplier's SDK would,
// and hands a status it did not want to the map with mapper.ResponseError.
func get(client *http.Client, url string) toolmw.Tool {
	return func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return toolmw.Result{}, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return toolmw.Result{}, err // a timeout, a refused connection: the map knows them
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			return toolmw.Result{}, mapper.ResponseError(resp)
		}
		return toolmw.Text("seats available"), nil
	}
}

// failing returns a tool that fails with errs in turn, then succeeds.
func failing(errs ...error) toolmw.Tool {
	var n atomic.Int32
	return func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		i := int(n.Add(1)) - 1
		if i < len(errs) {
			return toolmw.Result{}, errs[i]
		}
		return toolmw.Text("done"), nil
	}
}

func scenarios() []scenario {
	dialRefused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	return []scenario{
		{
			name:  "transient_then_ok",
			about: "an HTTP 503 is mapped to a transient failure and retried",
			spec:  toolmw.Spec{Name: "search_flights", Idempotent: true},
			tool:  failing(&httpError{code: 503, header: http.Header{"Retry-After": {"0"}}}),
		},
		{
			name:  "refusal",
			about: "the tool says no: an answer, shown to the model once, never retried",
			spec:  toolmw.Spec{Name: "cancel_booking", Idempotent: true},
			tool: func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
			},
		},
		{
			name:  "retry_after_past_deadline",
			about: "the dependency asks for 5s, the call has 1s left: fail closed at once",
			spec:  toolmw.Spec{Name: "quote_fare", Idempotent: true},
			tool:  failing(taxonomy.Transient("supplier_throttled", "the supplier asks us to wait").WithRetryAfter(5 * time.Second)),
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Second)
			},
		},
		{
			name:  "unmapped_non_idempotent",
			about: "an unknown error from a tool with side effects: permanent, never guessed",
			spec:  toolmw.Spec{Name: "charge_card"},
			tool:  failing(errors.New("ledger write failed for alice@example.com")),
		},
		{
			name:  "untyped_idempotent",
			about: "an unknown error from an idempotent tool is retried",
			spec:  toolmw.Spec{Name: "get_weather", Idempotent: true},
			tool:  failing(errors.New("weather cache: stale read")),
		},
		{
			name:  "timeout_idempotent",
			about: "the first attempt outruns its 100ms; an idempotent tool is tried again",
			spec:  toolmw.Spec{Name: "lookup_booking", Idempotent: true},
			tool:  hangOnce(),
		},
		{
			name:  "args_invalid",
			about: "the model's arguments do not fit: nothing runs, the model is told where",
			spec:  toolmw.Spec{Name: "book_seat"},
			tool: toolmw.Typed(func(ctx context.Context, in struct {
				Flight string `json:"flight"`
				Seats  int    `json:"seats"`
			}) (string, error) {
				return "booked", nil
			}),
			args: `{"flight":"LH 400","seats":"two","meal":"veg"}`,
		},
		{
			name:  "not_permitted",
			about: "a policy denies the call: not_permitted, distinct from the tool refusing",
			spec:  toolmw.Spec{Name: "delete_account"},
			tool:  failing(),
			stack: func(s middleware.Stack) (middleware.Stack, error) {
				return s.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Permit, Middleware: permit.New(permit.Allow("search_flights"))})
			},
		},
		{
			name:  "circuit_open",
			about: "refused connections opened the breaker for 30s; the call fails fast as circuit_open with RetryAfter, never sleeping out the open period",
			spec:  toolmw.Spec{Name: "seat_map", Idempotent: true},
			tool: func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				return toolmw.Result{}, dialRefused
			},
			warm: 1,
		},
		{
			name:  "upstream_timeout",
			about: "the supplier never answers; the http.Client's own 30ms timeout is the dependency's, not the caller's: retried for an idempotent tool",
			spec:  toolmw.Spec{Name: "seat_availability", Idempotent: true},
			server: func(w http.ResponseWriter, r *http.Request) {
				<-r.Context().Done() // hangs until the client gives up
			},
			onServer: get,
		},
		{
			name:  "http_conflict",
			about: "the supplier answers HTTP 409 with a token in its body; mapper.ResponseError makes it a refusal, body unread",
			spec:  toolmw.Spec{Name: "hold_seat"},
			server: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusConflict)
				fmt.Fprint(w, `{"error":"seat taken","debug":"api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc"}`)
			},
			onServer: get,
		},
		{
			name:  "run_budget_exhausted",
			about: "the run allows this tool 2 attempts; a third is not made",
			spec:  toolmw.Spec{Name: "check_inventory", Idempotent: true},
			tool: func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				return toolmw.Result{}, io.ErrUnexpectedEOF
			},
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				return budget.WithRun(ctx, budget.WithMaxAttempts(2)), cancel
			},
		},
		{
			name:  "cancelled",
			about: "the caller cancels: returned as context.Canceled, never retried",
			spec:  toolmw.Spec{Name: "send_email", Idempotent: true},
			tool: func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				<-ctx.Done()
				return toolmw.Result{}, ctx.Err()
			},
			ctx: func() (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			},
		},
	}
}

// hangOnce returns a tool whose first call waits for its context to end and
// whose later calls answer at once.
func hangOnce() toolmw.Tool {
	var n atomic.Int32
	return func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		if n.Add(1) == 1 {
			<-ctx.Done()
			return toolmw.Result{}, ctx.Err()
		}
		return toolmw.Text("booking B7 is confirmed"), nil
	}
}

func printTable(w io.Writer, rows []Row) {
	about := map[string]string{}
	for _, sc := range scenarios() {
		about[sc.name] = sc.about
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tOUTCOME\tKIND\tCODE\tATTEMPTS\tMS")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", r.Scenario, r.Outcome, dash(r.Kind), dash(r.Code), r.Attempts, r.ElapsedMS)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nWhat the model was told:")
	for _, r := range rows {
		fmt.Fprintf(w, "\n%s — %s\n  %s\n", r.Scenario, about[r.Scenario], strings.ReplaceAll(r.Told, "\n", "\n  "))
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
