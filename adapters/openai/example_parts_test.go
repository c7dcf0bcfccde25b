package openai_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	toolopenai "github.com/toolmw/toolmw/adapters/openai"
)

// A screenshot tool's result on the Responses API: its caption as
// input_text wrapped as untrusted data, its PNG as an input_image data
// URL. On Chat Completions the same answer is its Text, with a descriptor
// of the image.
func ExampleTurn_Items() {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	res := toolmw.Parts(toolmw.TextPart("The login page"), toolmw.ImagePart(png, "image/png"))
	turn := &toolopenai.Turn{Calls: []toolopenai.Answer{
		{CallID: "call_A1", Name: "screenshot", Result: res, Text: toolmw.ForModel(res, nil)},
	}}

	js, _ := json.Marshal(turn.Items())
	var items []struct {
		Output []struct {
			Type, Text string
			ImageURL   string `json:"image_url"`
		} `json:"output"`
	}
	_ = json.Unmarshal(js, &items)
	for _, o := range items[0].Output {
		fmt.Println(o.Type, o.Text+o.ImageURL)
	}
	fmt.Println(turn.Calls[0].Text)
	// Output:
	// input_text <untrusted-data source="tool_result">The login page</untrusted-data>
	// input_image data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==
	// <untrusted-data source="tool_result">The login page
	// [image: image/png, 16 bytes]</untrusted-data>
}
