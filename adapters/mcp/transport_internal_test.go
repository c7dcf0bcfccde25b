package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCountWithoutDecoding: member and arrayLen read a tools/list answer
// as encoding/json does, without decoding it.
func TestCountWithoutDecoding(t *testing.T) {
	for _, doc := range []string{
		`{"tools":[]}`,
		`{"tools":[{"name":"a"}]}`,
		` { "nextCursor" : "x\\"]}" , "tools" : [ {"name":"a]","x":[1,2,{"y":"}"}]} , 2 , "s" , true , null , -1.5e3 ] } `,
		`{"a":1,"tools":[1,2,3],"b":{"tools":[1]}}`,
		`{"tools":"not an array"}`,
		`{"other":[1,2]}`,
		`{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"c"}}`,
		`[1,2]`, `{`, `{"tools":[1,2`, ``,
	} {
		var v struct {
			Tools  []any `json:"tools"`
			Result struct {
				Tools []any `json:"tools"`
			} `json:"result"`
		}
		_ = json.Unmarshal([]byte(doc), &v)
		want := len(v.Tools)
		got := arrayLen(member([]byte(doc), "tools"))
		if res := member([]byte(doc), "result"); res != nil {
			want, got = len(v.Result.Tools), arrayLen(member(res, "tools"))
		}
		if got != want && json.Valid([]byte(doc)) {
			t.Errorf("%s: %d tools, want %d", doc, got, want)
		}
	}
	var b strings.Builder
	b.WriteString(`{"tools":[`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","inputSchema":{"type":"object","properties":{"a":{"description":"a \"quoted\" [x]"}}}}`, i)
	}
	b.WriteString(`]}`)
	doc := []byte(b.String())
	if n := arrayLen(member(doc, "tools")); n != 5000 {
		t.Fatalf("%d tools, want 5000", n)
	}
	if allocs := testing.AllocsPerRun(10, func() { arrayLen(member(doc, "tools")) }); allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}
