package classify_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/middleware/classify"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	errSoldOut := errors.New("supplier: sold out")
	m := mapper.Default().With(mapper.Is(errSoldOut, mapper.Refusal("fare_sold_out", "the fare is sold out")))

	// The supplier's errors, as a tool returns them.
	errs := []error{
		fmt.Errorf("book AF123: %w", errSoldOut),
		&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET},
	}
	for _, idempotent := range []bool{false, true} {
		for _, e := range errs {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "book_flight", Idempotent: idempotent},
				func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, e },
				classify.New(classify.WithMap(m)))
			_, err := tool(context.Background(), json.RawMessage(`{}`))
			retry, _ := taxonomy.ShouldRetry(err, idempotent)
			fmt.Printf("idempotent=%v %v (retry: %v)\n", idempotent, err, retry)
		}
	}
	// Output:
	// idempotent=false book_flight: tool-refused fare_sold_out: the fare is sold out (retry: false)
	// idempotent=false book_flight: tool-failed connection_reset: the connection to the upstream service broke (retry: false)
	// idempotent=true book_flight: tool-refused fare_sold_out: the fare is sold out (retry: false)
	// idempotent=true book_flight: tool-failed connection_reset: the connection to the upstream service broke (retry: true)
}
