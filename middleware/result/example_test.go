package result_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/result"
)

func Example() {
	mw := result.New(result.WithMaxBytes(64 << 10))
	spec := toolmw.Spec{Name: "get_booking", ResultJSON: true}

	broken := toolmw.MustWrap(spec, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text(`{"booking": "B-17"`), nil
	}, mw)
	_, err := broken(context.Background(), nil)
	fmt.Println(err)

	fine := toolmw.MustWrap(spec, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.JSON(map[string]string{"booking": "B-17", "status": "confirmed"})
	}, mw)
	res, _ := fine(context.Background(), nil)
	fmt.Println(res.Content)
	// Output:
	// get_booking: tool-result-invalid result_not_json: the tool's result is declared JSON and is not valid JSON
	// {"booking":"B-17","status":"confirmed"}
}

// The default allow-list takes the images every model API reads; an SVG,
// which can carry script, is refused unless allowed.
func ExampleWithMIMETypes() {
	shot := toolmw.MustWrap(toolmw.Spec{Name: "screenshot"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Parts(toolmw.TextPart("the login page"), toolmw.ImagePart([]byte("<svg/>"), "image/svg+xml")), nil
	}, result.New())
	_, err := shot(context.Background(), nil)
	fmt.Println(err)

	shot = toolmw.MustWrap(toolmw.Spec{Name: "screenshot"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Parts(toolmw.TextPart("the login page"), toolmw.ImagePart([]byte("<svg/>"), "image/svg+xml")), nil
	}, result.New(result.WithMIMETypes("image/png", "image/svg+xml")))
	res, err := shot(context.Background(), nil)
	fmt.Println(res.Parts()[1].Describe(), err)
	// Output:
	// screenshot: tool-result-invalid result_part_invalid: part 1 of the tool's result is of a MIME type the result layer does not allow
	// image image/svg+xml 19 bytes <nil>
}
