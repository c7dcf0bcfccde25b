package fallback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/fallback"
)

// partsTool returns an image of n bytes and a link while ok is set, and
// circuit-open after.
type partsTool struct {
	n    atomic.Int64
	down atomic.Bool
}

func (p *partsTool) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	if p.down.Load() {
		return toolmw.Result{}, open
	}
	return toolmw.Parts(toolmw.TextPart("chart"), toolmw.ImagePart(bytes.Repeat([]byte{7}, int(p.n.Load())), "image/png"),
		toolmw.ResourceLinkPart("https://example.com/data.csv", "data", "text/csv")), nil
}

// TestPartsServed: a last good result with parts is served whole, its
// parts after the mark, and Parse gives it back as it was.
func TestPartsServed(t *testing.T) {
	p := &partsTool{}
	p.n.Store(10)
	tool := wrap(t, search, p.tool, fallback.WithLastGood(0), fallback.WithSharedResults())
	ctx := context.Background()
	first, err := tool(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := toolmw.Result{}.WithParts(append([]toolmw.Part(nil), first.Parts()...)...)
	want.Parts()[1].Data = bytes.Clone(first.Parts()[1].Data)
	// The caller changes what it got: what is kept does not change.
	first.Parts()[1].Data[0] = 0
	first.Parts()[0].Text = "changed"
	p.down.Store(true)
	res, err := tool(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Content, "[toolmw fallback source=last_good") || len(res.Parts()) != 3 {
		t.Fatalf("got %+v", res)
	}
	m, orig, ok := fallback.Parse(res)
	if !ok || m.Source != fallback.SourceLastGood || !reflect.DeepEqual(orig, want) {
		t.Fatalf("Parse: %v %+v, want %+v", ok, orig, want)
	}
	// Nor does this caller change what the next is served.
	res.Parts()[1].Data[1] = 0
	again, _ := tool(ctx, nil)
	if _, orig, _ := fallback.Parse(again); !reflect.DeepEqual(orig, want) {
		t.Fatalf("served after a change: %+v", orig)
	}
}

// TestPartsJSON: a JSON result keeps its parts after its marked document.
func TestPartsJSON(t *testing.T) {
	fn := func(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) {
		return toolmw.Result{Content: `{"n":1}`, JSON: true}.WithParts([]toolmw.Part{toolmw.ImagePart([]byte{1}, "image/png")}...), nil
	}
	tool := wrap(t, search, func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Result{}, open }, fallback.WithFunc(fn))
	res, err := tool(context.Background(), nil)
	if err != nil || !res.JSON || len(res.Parts()) != 1 || res.Parts()[0].Kind != toolmw.PartImage {
		t.Fatalf("%+v %v", res, err)
	}
	if _, orig, ok := fallback.Parse(res); !ok || orig.Content != `{"n":1}` || len(orig.Parts()) != 1 {
		t.Fatalf("Parse: %+v", orig)
	}
}

// TestPartsCounted: the byte bound counts parts: an image larger than it
// is not kept, and kept images push older results out.
func TestPartsCounted(t *testing.T) {
	const limit = 4096
	p := &partsTool{}
	tool := wrap(t, search, p.tool, fallback.WithLastGood(0), fallback.WithSharedResults(), fallback.WithMaxBytes(limit))
	ctx := context.Background()
	call := func(args string, n int64) bool {
		p.n.Store(n)
		p.down.Store(n < 0)
		res, _ := tool(ctx, json.RawMessage(args))
		_, _, served := fallback.Parse(res)
		return served
	}
	call(`"too big"`, limit)
	call(`"a"`, 1000)
	call(`"b"`, 1000)
	call(`"c"`, 1600) // each also counts 53 bytes of text, link and types and 128 of overhead: 4143 > 4096, "a" goes
	for args, want := range map[string]bool{`"too big"`: false, `"a"`: false, `"b"`: true, `"c"`: true} {
		if got := call(args, -1); got != want {
			t.Errorf("%s served %v, want %v", args, got, want)
		}
	}
}
