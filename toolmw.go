package toolmw

import (
	"context"
	"encoding/json"

	"github.com/toolmw/toolmw/taxonomy"
)

// Tool is a tool's implementation: it receives the model's JSON arguments
// and returns a result or an error. A Tool must be safe to call from several
// goroutines at once if the agent loop calls tools concurrently.
type Tool func(ctx context.Context, args json.RawMessage) (Result, error)

// Middleware decorates a Tool. A middleware is called once per tool it wraps
// (so per-tool state is made there), and the Tool it returns once per call.
//
// A Middleware is called once per tool it wraps; the Tools it returns must be safe for concurrent use.
type Middleware func(Tool) Tool

// Chain composes middlewares; the first is the outermost:
// Chain(a, b)(t) == a(b(t)). Nil middlewares are skipped ([Wrap] rejects
// them instead). When one of mws was made by [Reject], Chain returns it, so
// that Wrap reports its error for the whole chain.
func Chain(mws ...Middleware) Middleware {
	for _, mw := range mws {
		if _, ok := rejected(mw); ok {
			return mw
		}
	}
	return func(t Tool) Tool {
		for i := len(mws) - 1; i >= 0; i-- {
			if mws[i] != nil {
				t = mws[i](t)
			}
		}
		return t
	}
}

// Result is what a tool returns. A text tool's Result is Content, the text
// shown to the model (wrapped as untrusted data by [ForModel]), and JSON
// reports whether Content is a JSON document. A Result may also carry
// parts, in order — text, JSON, images, audio, files, resource links and
// embedded resources (see [Part], [Parts] and [Result.WithParts]); a
// Content beside them is their first part. [Result.AllParts] reads both
// kinds alike. The parts are held behind one pointer, so that a text
// Result stays three words, as cheap to return through every layer as
// before parts existed.
type Result struct {
	Content string
	JSON    bool
	parts   *[]Part
}

// Text returns a plain-text Result.
func Text(s string) Result { return Result{Content: s} }

// JSON encodes v as a JSON Result. An encoding failure is a
// tool-result-invalid error with code result_encoding_failed.
func JSON(v any) (Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Result{}, taxonomy.ResultInvalid(taxonomy.CodeResultEncoding, "the tool's output could not be encoded as JSON").WithCause(err)
	}
	return Result{Content: string(b), JSON: true}, nil
}
