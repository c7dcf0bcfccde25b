package result_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/result"
)

// A typical result: 1 KiB of JSON.
var doc = `{"hotels":[` + strings.Repeat(`{"name":"Hotel Central","city":"Lisbon","stars":4,"price":129.5},`, 15) + `{"name":"Last","city":"Porto","stars":3,"price":80}]}`

func bench(b *testing.B, res toolmw.Result, opts ...result.Option) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "search"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return res, nil
	}, result.New(opts...))
	ctx := context.Background()
	b.SetBytes(int64(len(res.Content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkText measures the success path for a text result: size and UTF-8.
func BenchmarkText(b *testing.B) { bench(b, toolmw.Text(doc)) }

// BenchmarkJSON adds the JSON check.
func BenchmarkJSON(b *testing.B) { bench(b, toolmw.Result{Content: doc, JSON: true}) }
