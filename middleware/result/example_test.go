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
