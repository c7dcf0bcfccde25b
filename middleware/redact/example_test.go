package redact_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/redact"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	charge := func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		// The tool author put the card number in the refusal.
		return toolmw.Result{}, taxonomy.Refusal("card_declined", "card 4111 1111 1111 1111 was declined")
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "charge"}, charge, redact.New())

	_, err := tool(context.Background(), json.RawMessage(`{}`))
	fmt.Println(err)
	fmt.Println(toolmw.ForModel(toolmw.Result{}, err))
	// Output:
	// charge: tool-refused card_declined: card [REDACTED:card] was declined
	// <untrusted-data source="tool_refusal">card_declined: card [REDACTED:card] was declined</untrusted-data>
}

// With a keyed hash, the same customer reads the same without being
// disclosed, and results can be scrubbed too.
func ExampleWithKeyedHash() {
	lookup := func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("orders of jane.doe@example.com: 3"), nil
	}
	mw := redact.New(redact.WithKeyedHash([]byte("a key from your secret store")), redact.WithResults())
	tool := toolmw.MustWrap(toolmw.Spec{Name: "orders"}, lookup, mw)

	for range 2 {
		res, _ := tool(context.Background(), json.RawMessage(`{}`))
		fmt.Println(res.Content)
	}
	// Output:
	// orders of [REDACTED:email:acb62315]: 3
	// orders of [REDACTED:email:acb62315]: 3
}
