package toolmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

// codeNotCancellable is the tour's code, declared once.
var codeNotCancellable = taxonomy.Declare("booking_not_cancellable")

// TestReadmeTour runs the README's tour as written, with a fake supplier, so
// the README's claims stay true.
func TestReadmeTour(t *testing.T) {
	ctx := context.Background()
	logger := zerolog.Nop()
	supplier := fakeSupplier{}

	type cancelArgs struct {
		Booking string `json:"booking"`
	}
	cancel := toolmw.Typed(func(ctx context.Context, a cancelArgs) (string, error) {
		ok, err := supplier.Cancel(ctx, a.Booking)
		if err != nil {
			return "", err
		}
		if !ok {
			return "", taxonomy.Refusal(codeNotCancellable, "this fare is non-refundable")
		}
		return "cancelled " + a.Booking, nil
	})

	stack := middleware.Default(middleware.WithLogger(logger))
	tool, err := stack.Wrap(toolmw.Spec{Name: "cancel_booking", Description: "Cancel a booking."}, cancel)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stack.Wrap(toolmw.Spec{Name: "cancel booking"}, cancel); !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
		t.Fatalf("a bad name is not a typed error at start-up: %v", err)
	}

	res, err := tool(toolmw.WithCallID(ctx, "call_1"), json.RawMessage(`{"booking":"B7"}`))
	retry, after := taxonomy.ShouldRetry(err, false)
	info := taxonomy.InfoOf(err)
	told := toolmw.ForModel(res, err)
	if retry || after != 0 || info.Code != "booking_not_cancellable" ||
		told != `<untrusted-data source="tool_refusal">booking_not_cancellable: this fare is non-refundable</untrusted-data>` {
		t.Fatalf("refusal: retry=%v after=%v info=%+v told=%s", retry, after, info, told)
	}

	// Hand the map an HTTP status: a 503 from a real server on 127.0.0.1
	// is transient, so the chain retries; a 409 is a refusal, never retried.
	statuses := []int{http.StatusServiceUnavailable, http.StatusOK, http.StatusConflict}
	var served atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(statuses[min(int(served.Add(1))-1, len(statuses)-1)])
	}))
	defer srv.Close()
	client := srv.Client()
	quote, err := middleware.Default().Wrap(toolmw.Spec{Name: "quote"}, toolmw.Typed(func(ctx context.Context, _ struct{}) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode >= 300 {
			return "", mapper.ResponseError(resp)
		}
		return "a quote", nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := quote(ctx, json.RawMessage(`{}`)); err != nil || served.Load() != 2 {
		t.Fatalf("503 then 200: %v %v after %d requests", res, err, served.Load())
	}
	_, err = quote(ctx, json.RawMessage(`{}`))
	if again, _ := taxonomy.ShouldRetry(err, false); again || taxonomy.InfoOf(err).Code != taxonomy.CodeUpstreamConflict || served.Load() != 3 {
		t.Fatalf("409: %v after %d requests", err, served.Load())
	}

	m := mapper.Default().With(
		mapper.Is(errSoldOut, mapper.Refusal("sold_out", "no seats left on this flight")),
		mapper.Status(409, mapper.Refusal("booking_not_cancellable", "this fare is non-refundable")),
	)
	stack = middleware.Default(middleware.WithMapper(m))
	book, err := stack.Wrap(toolmw.Spec{Name: "book"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, fmt.Errorf("supplier: %w", errSoldOut)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := book(ctx, nil); taxonomy.InfoOf(err).Code != "sold_out" {
		t.Fatalf("mapped: %v", err)
	}

	box := toolmw.NewToolbox(middleware.Default().Middleware())
	search := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("3 flights"), nil
	}
	if err := box.Register(toolmw.Spec{Name: "search_flights", Idempotent: true}, search); err != nil {
		t.Fatal(err)
	}
	ctx = budget.WithRun(ctx)
	if res, err := box.Call(toolmw.WithCallID(ctx, "c2"), "search_flights", nil); err != nil || res.Content != "3 flights" {
		t.Fatalf("toolbox: %v %v", res, err)
	}
	if run, _ := budget.RunFrom(ctx); run.Remaining("search_flights") != 11 {
		t.Fatalf("run budget: %d remaining", run.Remaining("search_flights"))
	}

	type forecastArgs struct {
		City string `json:"city" jsonschema:"City name, such as Lisbon"`
		Days int8   `json:"days,omitempty"`
		Unit string `json:"unit,omitempty" enum:"c,f"`
	}
	forecast := func(ctx context.Context, a forecastArgs) (string, error) { return "sunny in " + a.City, nil }
	box = toolmw.NewToolbox(middleware.Default().Middleware())
	if err := box.Register(toolmw.Spec{Name: "forecast", Description: "Weather forecast."}, toolmw.Typed(forecast)); err != nil {
		t.Fatal(err)
	}
	for _, p := range []schema.Profile{schema.OpenAIStrict, schema.MCP} {
		defs, err := box.Definitions(p)
		if err != nil {
			t.Fatal(err)
		}
		if printed := "// " + string(defs[0].InputSchema) + "\n"; !strings.Contains(readme(t), printed) {
			t.Fatalf("the README does not show the %s definition %s", p, printed)
		}
	}
	if res, err := box.Call(ctx, "forecast", json.RawMessage(`{"city":"Lisbon","days":null,"unit":null}`)); err != nil || res.Content != "sunny in Lisbon" {
		t.Fatalf("a strict-mode call with nulls: %v %v", res, err)
	}

	myBreaker := func(next toolmw.Tool) toolmw.Tool { return next }
	stack, err = middleware.Default().Replace(middleware.Breaker, myBreaker)
	if err != nil {
		t.Fatal(err)
	}
	stack, err = stack.Remove(middleware.RateLimit)
	if err != nil {
		t.Fatal(err)
	}
	if got := stack.String(); got != "tracing → logging → events → retry → breaker → timeout → recovery → redact → classify → tool" {
		t.Fatalf("stack: %s", got)
	}
	if !strings.Contains(readme(t), got(stack)) {
		t.Fatalf("the README does not show %q", got(stack))
	}
}

func got(s middleware.Stack) string { return s.String() }

func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var errSoldOut = errors.New("sold out")

type fakeSupplier struct{}

func (fakeSupplier) Cancel(ctx context.Context, booking string) (bool, error) { return false, nil }
