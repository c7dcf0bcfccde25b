package toolmw_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// TestDefinitionErrorsQuoteNoSecret: a bad tool name, or a property name of
// a hand-written schema, is quoted by a definition error only when no
// secret is found in it wherever one would start (the rule of call ids):
// a canary glued after 0 to 75 bytes reaches no message. Cut and not
// scrubbed, a name leaked 16 canaries.
func TestDefinitionErrorsQuoteNoSecret(t *testing.T) {
	for _, s := range canary.Secrets {
		for _, pad := range []int{0, 40, 60, 70, 75} {
			name := strings.Repeat("x", pad) + s.Value + " !"
			err := toolmw.Spec{Name: name}.Validate()
			if err == nil {
				t.Fatalf("name %q valid", name)
			}
			if l := canary.Leaked(err.Error()); l != "" {
				t.Errorf("%s after %d bytes: the name error leaks %s: %v", s.Family, pad, l, err)
			}
		}
	}
	type in struct {
		A string `json:"a"`
	}
	for _, s := range canary.Secrets {
		doc := json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},` + mustQuote(strings.Repeat("y", 30)+s.Value) + `:{"type":"string"}}}`)
		_, err := toolmw.Wrap(toolmw.Spec{Name: "t", InputSchema: doc}, toolmw.Typed(func(context.Context, in) (string, error) { return "", nil }))
		if err == nil {
			continue
		}
		if l := canary.Leaked(err.Error()); l != "" {
			t.Errorf("%s: the schema error leaks %s: %v", s.Family, l, err)
		}
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
