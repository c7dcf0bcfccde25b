package mcp

import (
	"encoding/json"
	"testing"
)

// TestObjectSchema: only a schema of type "object" is an outputSchema MCP
// accepts; another is not published.
func TestObjectSchema(t *testing.T) {
	for doc, want := range map[string]bool{
		`{"type":"object","properties":{}}`: true,
		`{"type":"array"}`:                  false,
		`{"type":["object","null"]}`:        false,
		`{}`:                                false,
		`true`:                              false,
	} {
		if got := objectSchema(json.RawMessage(doc)); got != want {
			t.Errorf("objectSchema(%s) = %v, want %v", doc, got, want)
		}
	}
}
