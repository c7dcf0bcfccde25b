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

// A screenshot tool's result on an API that takes images in its tool
// results: the caption goes as text wrapped as untrusted data, the PNG as
// an image; the SVG, which such APIs do not take, as a descriptor.
func ExampleMedia() {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	res := toolmw.Parts(
		toolmw.TextPart("The login page"),
		toolmw.ImagePart(png, "image/png"),
		toolmw.ImagePart([]byte("<svg/>"), "image/svg+xml"),
	)
	media := turn.NewMedia(turn.MediaLimits{Image: 5 << 20, Document: 30 << 20, Total: 30 << 20})
	blocks, ok := media.Blocks(res)
	fmt.Println("media:", ok)
	for _, b := range blocks {
		if b.Kind == turn.BlockImage {
			fmt.Println("image", b.DataURL())
		} else {
			fmt.Println("text", b.Text)
		}
	}
	// Output:
	// media: true
	// text <untrusted-data source="tool_result">The login page</untrusted-data>
	// image data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==
	// text <untrusted-data source="tool_result">[image: image/svg+xml, 6 bytes]</untrusted-data>
}
