package toolmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestReject(t *testing.T) {
	bad := taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "retry: WithMaxAttempts(0)")
	var ran bool
	tool := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		ran = true
		return toolmw.Text("ok"), nil
	}
	pass := func(next toolmw.Tool) toolmw.Tool { return next }

	for name, mws := range map[string][]toolmw.Middleware{
		"alone":      {toolmw.Reject(bad)},
		"among":      {pass, toolmw.Reject(bad), pass},
		"in a chain": {pass, toolmw.Chain(pass, toolmw.Reject(bad))},
		"nested":     {toolmw.Chain(toolmw.Chain(toolmw.Reject(bad)))},
		"nil reason": {toolmw.Reject(nil)},
		"two, first": {toolmw.Reject(bad), toolmw.Reject(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := toolmw.Wrap(toolmw.Spec{Name: "book"}, tool, mws...)
			info := taxonomy.InfoOf(err)
			if info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid {
				t.Fatalf("Wrap: %v, want tool-definition-invalid/option_invalid", err)
			}
			if name != "nil reason" && info.Tool != "book" {
				t.Errorf("the error does not name the tool: %+v", info)
			}
		})
	}

	// Applied by hand, every call fails with the error; the tool never runs.
	_, err := toolmw.Reject(bad)(tool)(context.Background(), nil)
	if !errors.Is(err, taxonomy.ErrDefinitionInvalid) || ran {
		t.Fatalf("by hand: err=%v ran=%v", err, ran)
	}
	// A healthy chain is not mistaken for a rejection.
	if _, err := toolmw.Wrap(toolmw.Spec{Name: "book"}, tool, pass, toolmw.Chain(pass)); err != nil {
		t.Fatal(err)
	}
}
