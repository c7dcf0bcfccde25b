package anthropic_test

import (
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	toolanthropic "github.com/toolmw/toolmw/adapters/anthropic"
)

// A screenshot tool's result: a tool_result with its caption as a text
// block wrapped as untrusted data and its PNG as a base64 image block.
func ExampleTurn_Blocks() {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	res := toolmw.Parts(toolmw.TextPart("The login page"), toolmw.ImagePart(png, "image/png"))
	turn := &toolanthropic.Turn{Calls: []toolanthropic.Answer{
		{ToolUseID: "toolu_A1", Name: "screenshot", Result: res, Text: toolmw.ForModel(res, nil)},
	}}

	js, _ := json.Marshal(turn.Blocks())
	var blocks []struct {
		Content []struct {
			Type, Text string
			Source     struct {
				Type, Data string
				MediaType  string `json:"media_type"`
			} `json:"source"`
		} `json:"content"`
	}
	_ = json.Unmarshal(js, &blocks)
	for _, c := range blocks[0].Content {
		if c.Type == "text" {
			fmt.Println(c.Type, c.Text)
		} else {
			fmt.Println(c.Type, c.Source.Type, c.Source.MediaType, c.Source.Data)
		}
	}
	// Output:
	// text <untrusted-data source="tool_result">The login page</untrusted-data>
	// image base64 image/png iVBORw0KGgoAAAANSUhEUg==
}
