package bulkhead_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		started <- struct{}{}
		<-release
		return toolmw.Text("booked"), nil
	}
	// One booking at a time; a second waits at most 10ms for the slot.
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, slow,
		bulkhead.New(1, bulkhead.WithMaxWait(10*time.Millisecond)))

	done := make(chan string)
	go func() {
		res, _ := tool(context.Background(), nil)
		done <- res.Content
	}()
	<-started // the first call has the slot

	_, err := tool(context.Background(), nil)
	info := taxonomy.InfoOf(err)
	fmt.Println(info.Kind, info.Code, "retryable:", info.Retryable)

	close(release)
	fmt.Println(<-done)
	// Output:
	// rate-limited bulkhead_full retryable: true
	// booked
}
