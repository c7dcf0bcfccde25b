package timeout_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	// A lookup that respects its context but is slower than allowed.
	slow := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		select {
		case <-time.After(time.Minute):
			return toolmw.Text("found"), nil
		case <-ctx.Done():
			return toolmw.Result{}, ctx.Err()
		}
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "lookup", Idempotent: true}, slow,
		timeout.New(5*time.Millisecond))

	_, err := tool(context.Background(), nil)
	info := taxonomy.InfoOf(err)
	fmt.Println(info.Kind, info.Code, "retryable:", info.Retryable)
	fmt.Println("deadline exceeded:", errors.Is(err, context.DeadlineExceeded))
	// Output:
	// tool-timeout timeout retryable: true
	// deadline exceeded: true
}

// A tool that ignores its context is abandoned at the deadline; what it
// returns later is reported, not lost.
func ExampleWithAbandon() {
	release := make(chan struct{})
	reported := make(chan struct{})
	stubborn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		<-release
		return toolmw.Text("booked"), nil
	}
	onLate := func(l timeout.Late) {
		fmt.Printf("late result of %s: %q, err=%v\n", l.Call.Tool, l.Result.Content, l.Err)
		close(reported)
	}
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, stubborn,
		timeout.New(5*time.Millisecond, timeout.WithAbandon(), timeout.WithOnLate(onLate)))

	_, err := tool(context.Background(), nil)
	fmt.Println(err)
	close(release) // the tool finally returns
	<-reported
	// Output:
	// book: tool-timeout timeout: the attempt did not finish within 5ms
	// late result of book: "booked", err=<nil>
}
