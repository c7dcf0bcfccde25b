package toolmwtest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/turn"
)

// The smallest adapter: package turn itself, the model's calls as they
// come, passes the contract.
func TestAdapterOnTurn(t *testing.T) {
	toolmwtest.TestAdapter(t, func(t *testing.T, box *toolmw.Toolbox, o turn.Options) toolmwtest.Dispatch {
		offered := map[string]bool{}
		for _, spec := range box.Specs() {
			offered[spec.Name] = true
		}
		return func(ctx context.Context, calls []toolmwtest.ModelCall) ([]toolmwtest.Reply, error) {
			cs := make([]turn.Call, len(calls))
			for i, c := range calls {
				cs[i] = turn.Call{ID: c.ID, Name: c.Name, Args: json.RawMessage(c.Args)}
				if !offered[c.Name] {
					cs[i].Refused = turn.NotOffered(c.Name)
				}
			}
			answers := turn.Run(ctx, box, cs, o)
			replies := make([]toolmwtest.Reply, len(answers))
			for i, a := range answers {
				replies[i] = toolmwtest.Reply{CallID: calls[i].ID, Text: a.Text, Err: a.Err}
			}
			return replies, turn.StopOf(ctx, answers)
		}
	})
}
