package dedupe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/taxonomy"
)

// imageTool answers with an image of size bytes and a caption.
func imageTool(n *atomic.Int64, size int) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) {
		n.Add(1)
		return toolmw.Parts(toolmw.TextPart("screenshot"), toolmw.ImagePart(bytes.Repeat([]byte{1}, size), "image/png")), nil
	}
}

// TestPartsRepeated: a repeat gets the recorded parts whole, and no
// caller's change to what it got reaches another.
func TestPartsRepeated(t *testing.T) {
	var n atomic.Int64
	tool, err := toolmw.Wrap(toolmw.Spec{Name: "shoot"}, imageTool(&n, 100), dedupe.New())
	if err != nil {
		t.Fatal(err)
	}
	ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
	first, err := tool(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := toolmw.Parts(toolmw.TextPart("screenshot"), toolmw.ImagePart(bytes.Repeat([]byte{1}, 100), "image/png"))
	first.Parts()[1].Data[0] = 9
	first.Parts()[0].Text = "changed"
	again, err := tool(ctx, nil)
	if err != nil || n.Load() != 1 || !reflect.DeepEqual(again, want) {
		t.Fatalf("repeat: %+v %v after %d runs", again, err, n.Load())
	}
	again.Parts()[1].Data[1] = 9
	if third, _ := tool(ctx, nil); !reflect.DeepEqual(third, want) {
		t.Fatalf("third: %+v", third)
	}
}

// TestPartsCounted: WithMaxBytes counts the parts' bytes: an image over
// it is not held, and its repeat is told so without the tool running.
func TestPartsCounted(t *testing.T) {
	var n atomic.Int64
	tool, err := toolmw.Wrap(toolmw.Spec{Name: "shoot"}, imageTool(&n, 1000), dedupe.New(dedupe.WithMaxBytes(1000)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := toolmw.WithCallID(budget.WithRun(context.Background()), "call_1")
	if _, err := tool(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := tool(ctx, nil)
	if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeDuplicateDropped || len(res.Parts()) != 0 || n.Load() != 1 {
		t.Fatalf("repeat: %+v %v after %d runs", res, err, n.Load())
	}
}
