package toolmwtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
	"github.com/toolmw/toolmw/turn"
)

// My loop gives up after the run budget: the supplier never recovers, the
// model keeps asking, and the run stops once its 4 attempts are used: 3 in
// the first turn (the retry layer), 1 in the second, and the model is told
// why.
func ExampleRunLoop() {
	search := toolmwtest.FailTimes(1000, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down"), toolmw.Text("ok"))
	box := toolmw.NewToolbox(middleware.Default(middleware.WithRetry(retry.WithBackoff(0, 0))).Middleware())
	_ = box.Register(toolmw.Spec{Name: "search", Idempotent: true}, search.Tool())
	model := toolmwtest.NewModel(toolmwtest.ModelTurn{Calls: []turn.Call{{ID: "call_1", Name: "search", Args: json.RawMessage(`{}`)}}})

	ctx := budget.WithRun(context.Background(), budget.WithMaxAttempts(4))
	run := toolmwtest.RunLoop(ctx, box, model, 50, turn.Options{})
	fmt.Println(errors.Is(run.Err, taxonomy.ErrRunLimitExceeded), search.Calls(), run.Turns)
	fmt.Println(model.Told()[1][0])
	// Output:
	// true 4 2
	// <untrusted-data source="tool_error">run-limit-exceeded run_attempts_exhausted: the run's attempt cap for this tool is used up</untrusted-data>
}
