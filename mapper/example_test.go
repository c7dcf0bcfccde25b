package mapper_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

// supplierError is what a supplier SDK returns.
type supplierError struct {
	Status  int
	Headers http.Header
	Detail  string
}

func (e *supplierError) Error() string       { return fmt.Sprintf("supplier: %d %s", e.Status, e.Detail) }
func (e *supplierError) StatusCode() int     { return e.Status }
func (e *supplierError) Header() http.Header { return e.Headers }

func Example() {
	errSoldOut := errors.New("supplier: sold out")
	m := mapper.Default().With(
		mapper.Is(errSoldOut, mapper.Refusal("fare_sold_out", "the fare is sold out")),
	)

	for _, err := range []error{
		fmt.Errorf("book: %w", errSoldOut),
		&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED},
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
		&supplierError{Status: 429, Headers: http.Header{"Retry-After": {"30"}}},
		errors.New("card 4111 1111 1111 1111 failed for token=hunter2hunter2"),
	} {
		err = m.ClassifyFor("book_flight", false, err)
		info := taxonomy.InfoOf(err)
		fmt.Printf("%-40s retry=%-5v after=%v\n", info.Code, info.Retryable, time.Duration(info.RetryAfter))
		fmt.Println("  ", toolmw.ForModel(toolmw.Result{}, err))
	}
	// Output:
	// fare_sold_out                            retry=false after=0s
	//    <untrusted-data source="tool_refusal">fare_sold_out: the fare is sold out</untrusted-data>
	// upstream_unavailable                     retry=true  after=0s
	//    <untrusted-data source="tool_error">tool-failed upstream_unavailable: the upstream service could not be reached</untrusted-data>
	// connection_reset                         retry=false after=0s
	//    <untrusted-data source="tool_error">tool-failed connection_reset: the connection to the upstream service broke</untrusted-data>
	// upstream_rate_limited                    retry=true  after=30s
	//    <untrusted-data source="tool_error">rate-limited upstream_rate_limited: the upstream service is limiting the rate of requests</untrusted-data>
	// unmapped_failure                         retry=false after=0s
	//    <untrusted-data source="tool_error">tool-failed unmapped_failure</untrusted-data>
}

// A rule can look at the error's value, and an HTTP-date Retry-After is read
// against the map's clock.
func ExampleTypeFunc() {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	m := mapper.Default().
		WithOptions(mapper.WithClock(clock.NewFake(now))).
		With(mapper.TypeFunc(func(e *supplierError) (mapper.Verdict, bool) {
			// The supplier says 400 "stale_quote" when a fresh quote would do.
			return mapper.Transient("quote_stale"), e.Status == 400 && e.Detail == "stale_quote"
		}))

	stale := &supplierError{Status: 400, Detail: "stale_quote",
		Headers: http.Header{"Retry-After": {now.Add(2 * time.Minute).Format(http.TimeFormat)}}}
	other := &supplierError{Status: 400, Detail: "bad date"}
	for _, err := range []error{stale, other} {
		te, _ := taxonomy.From(m.Classify("quote", err))
		fmt.Println(te.Kind(), te.Code(), te.Retryable(), te.RetryAfter())
	}
	// Output:
	// tool-failed quote_stale true 2m0s
	// tool-failed upstream_bad_request false 0s
}

// WithMessages keeps the foreign error's text in the message, scrubbed.
func ExampleWithMessages() {
	m := mapper.New(mapper.WithMessages())
	err := m.Classify("lookup", errors.New("no account for jane.doe@example.com"))
	fmt.Println(err)
	// Output:
	// lookup: tool-failed unmapped_failure: no account for [REDACTED:email]
}
