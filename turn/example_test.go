package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/turn"
)

// One turn of a loop of your own: the model asked for two calls, one of a
// tool it was not offered. Run answers both, in the model's order; StopOf
// says the loop may go on and give the answers to the model.
func Example() {
	box := toolmw.NewToolbox()
	_ = box.Register(toolmw.Spec{Name: "search_flights", Idempotent: true},
		func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Text("AF123 at 09:40"), nil
		})

	offered := map[string]bool{"search_flights": true}
	var calls []turn.Call
	for _, c := range []struct{ id, name, args string }{
		{"call_1", "search_flights", `{"from":"CDG","to":"JFK"}`},
		{"call_2", "delete_account", `{}`},
	} {
		call := turn.Call{ID: c.id, Name: c.name, Args: json.RawMessage(c.args)}
		if !offered[c.name] {
			call.Refused = turn.NotOffered(c.name)
		}
		calls = append(calls, call)
	}
	answers := turn.Run(context.Background(), box, calls, turn.Options{})
	for i, a := range answers {
		if a.Err != nil {
			fmt.Println(calls[i].ID, "refused:", taxonomy.InfoOf(a.Err).Code)
			continue
		}
		fmt.Println(calls[i].ID, "answered")
	}
	var stop *turn.Stop
	fmt.Println("stop:", errors.As(turn.StopOf(context.Background(), answers), &stop))
	// Output:
	// call_1 answered
	// call_2 refused: tool_not_found
	// stop: false
}
