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

// A secret a tool sends the client through its session, here in a
// progress message, is scrubbed; so are the parts of its result, with
// WithResults.
func ExampleNew_session() {
	tool := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		_ = toolmw.ReportProgress(ctx, 1, 2, "mailing jane.doe@example.com")
		return toolmw.Parts(toolmw.ResourceLinkPart("https://example.com/r?token=abcdef123456789", "report", "text/csv")), nil
	}
	ctx := toolmw.WithSession(context.Background(), printSession{})
	res, _ := redact.New(redact.WithResults())(tool)(ctx, nil)
	fmt.Println(res.Parts()[0].URI)
	// Output:
	// progress: mailing [REDACTED:email]
	// https://example.com/r?token=[REDACTED:query_secret]
}

// printSession prints what a tool reports.
type printSession struct{}

func (printSession) Progress(_ context.Context, p toolmw.Progress) error {
	fmt.Println("progress:", p.Message)
	return nil
}
func (printSession) Log(context.Context, toolmw.LogLine) error { return nil }
func (printSession) Elicit(context.Context, toolmw.Elicitation) (toolmw.ElicitResult, error) {
	return toolmw.ElicitResult{}, toolmw.ErrSessionUnsupported
}
func (printSession) Sample(context.Context, toolmw.SampleRequest) (toolmw.SampleResult, error) {
	return toolmw.SampleResult{}, toolmw.ErrSessionUnsupported
}
