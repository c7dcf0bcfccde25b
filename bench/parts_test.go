package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rs/zerolog"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
)

// partsResults are the results BenchmarkParts compares through the default
// stack: a text result as every text tool returns it, the same text as one
// part, and a text part with a small PNG image.
var partsResults = []struct {
	name string
	res  toolmw.Result
}{
	{"text", toolmw.Result{Content: "ok"}},
	{"one_text_part", toolmw.Parts(toolmw.TextPart("ok"))},
	{"text_and_image", toolmw.Parts(toolmw.TextPart("ok"), toolmw.ImagePart(make([]byte, 4096), "image/png"))},
}

// BenchmarkParts is the default stack (as toolmw_default) around a tool
// returning each of partsResults: what a result of parts costs beside a
// text one, in the same run.
func BenchmarkParts(b *testing.B) {
	for _, r := range partsResults {
		b.Run(r.name, func(b *testing.B) {
			res := r.res
			tool := toolmw.MustWrap(spec, func(context.Context, json.RawMessage) (toolmw.Result, error) { return res, nil },
				middleware.Default(
					middleware.WithTracing(noopTracing()...),
					middleware.WithLogger(zerolog.Nop()),
					middleware.WithEvents(discard),
					middleware.WithRateLimit(hugeRate, hugeBurst),
					middleware.WithTimeout(attemptTimeout),
				).Middleware())
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, err := tool(ctx, benchArgs)
				if err != nil {
					b.Fatal(err)
				}
				sink = out
			}
		})
	}
}
