package redact_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/redact"
	"github.com/toolmw/toolmw/taxonomy"
)

//go:noinline
func ok(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Text("3 orders, the last shipped on 2025-03-01 to the usual address"), nil
}

var declined = taxonomy.Refusal("card_declined", "card 4111 1111 1111 1111 was declined")

//go:noinline
func refuse(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{}, declined
}

func bench(b *testing.B, tool toolmw.Tool) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = tool(ctx, nil)
	}
}

// BenchmarkSuccess measures the success path: a nil check.
func BenchmarkSuccess(b *testing.B) { bench(b, redact.New()(ok)) }

// BenchmarkSuccessResults scrubs a clean result.
func BenchmarkSuccessResults(b *testing.B) { bench(b, redact.New(redact.WithResults())(ok)) }

// BenchmarkSuccessResultsJSON scrubs a clean result of 1 KiB of JSON.
func BenchmarkSuccessResultsJSON(b *testing.B) {
	doc := `{"hotels":[` + strings.Repeat(`{"name":"Hotel Central","city":"Lisbon","stars":4,"price":129.5},`, 15) + `{"name":"Last","city":"Porto","stars":3,"price":80}]}`
	tool := redact.New(redact.WithResults())(func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{Content: doc, JSON: true}, nil
	})
	b.SetBytes(int64(len(doc)))
	bench(b, tool)
}

// BenchmarkRefusal scrubs a refusal holding a card number.
func BenchmarkRefusal(b *testing.B) { bench(b, redact.New()(refuse)) }
