package schema

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// atTheBounds are schema documents each at one bound on a schema's work,
// and one at several at once: what the slowest schema toolmw accepts costs
// to compile.
func atTheBounds() []struct {
	name string
	doc  json.RawMessage
} {
	// nullable properties, as a generator writes them: 3 objects each.
	var props []string
	for i := range (MaxSchemaNodes - 3) / 3 {
		props = append(props, fmt.Sprintf(`"p%d":{"anyOf":[{"type":"string","pattern":"^[a-z]{1,16}$"},{"type":"null"}]}`, i))
	}
	nullable := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	enum := `{"type":"object","properties":{"e":{"type":"string","enum":[` +
		strings.TrimSuffix(strings.Repeat(`"an enum value",`, (MaxSchemaBytes-100)/16), ",") + `]}}}`
	return []struct {
		name string
		doc  json.RawMessage
	}{
		{"nodes", wideSchema(MaxSchemaNodes - 2)},
		{"nullable", json.RawMessage(nullable)},
		{"depth", notChain(MaxSchemaDepth)},
		{"nested", nestedSchema(MaxSchemaDepth/2 - 1)},
		{"bytes", json.RawMessage(enum)},
		{"patterns", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"^(` +
			strings.TrimSuffix(strings.Repeat("abcdefg|", (MaxPatternBytes-4)/8), "|") + `)$"}}}`)},
		{"expansion", fanSchema((MaxExpansion-2)/2, 1)},
	}
}

// BenchmarkCompileAtTheBounds compiles the costliest schemas toolmw
// accepts; each must stay well under 100 ms.
func BenchmarkCompileAtTheBounds(b *testing.B) {
	for _, c := range atTheBounds() {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile(c.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAtTheBoundsCompile keeps the benchmark's documents valid.
func TestAtTheBoundsCompile(t *testing.T) {
	for _, c := range atTheBounds() {
		if _, err := Compile(c.doc); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// BenchmarkValidationBudget counts a whole budget's steps for the
// doubling schema, to refuse the arguments: what refusing costs.
func BenchmarkValidationBudget(b *testing.B) {
	v, err := Compile(json.RawMessage(deepBranching))
	if err != nil {
		b.Fatal(err)
	}
	args := nestedArgs(40)
	for b.Loop() {
		if err := v.ValidateContext(context.Background(), args, 0); err == nil {
			b.Fatal("accepted")
		}
	}
}
