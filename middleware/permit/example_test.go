package permit_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/permit"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	box := toolmw.NewToolbox(permit.New(permit.Allow("search")))
	tool := func(context.Context, json.RawMessage) (toolmw.Result, error) { return toolmw.Text("done"), nil }
	box.Register(toolmw.Spec{Name: "search"}, tool)
	box.Register(toolmw.Spec{Name: "delete_account"}, tool)

	for _, name := range []string{"search", "delete_account"} {
		res, err := box.Call(context.Background(), name, nil)
		fmt.Println(taxonomy.OutcomeOf(err), toolmw.ForModel(res, err))
	}
	// Output:
	// ok <untrusted-data source="tool_result">done</untrusted-data>
	// not_permitted <untrusted-data source="tool_error">tool-not-permitted not_permitted: the call is not permitted by policy</untrusted-data>
}
