package result

import (
	"context"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the result-checking middleware. See the package documentation
// for the checks. It only checks: a result that passes is returned as it is
// (the redact layer is the one that scrubs results). Given an option value
// it cannot use, it returns a [toolmw.Reject] of the [Validate] error, which
// toolmw.Wrap reports at start-up.
func New(opts ...Option) toolmw.Middleware {
	c := newConfig(opts)
	if err := c.err(); err != nil {
		return toolmw.Reject(err)
	}
	errTooLarge := taxonomy.ResultInvalid(taxonomy.CodeResultTooLarge,
		"the tool's result is larger than the limit of "+strconv.Itoa(c.maxBytes)+" bytes")
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			switch {
			case err != nil:
				return res, err
			case len(res.Content) > c.maxBytes:
				return toolmw.Result{}, errTooLarge
			case !utf8.ValidString(res.Content):
				return toolmw.Result{}, errNotUTF8
			}
			if declaredJSON(ctx, res) && !json.Valid([]byte(res.Content)) {
				return toolmw.Result{}, errNotJSON
			}
			return res, nil
		}
	}
}

var (
	errNotUTF8 = taxonomy.ResultInvalid(taxonomy.CodeResultNotUTF8, "the tool's result is not valid UTF-8")
	errNotJSON = taxonomy.ResultInvalid(taxonomy.CodeResultNotJSON, "the tool's result is declared JSON and is not valid JSON")
)

// declaredJSON reports whether res must be JSON: it says so, or its tool's
// spec does.
func declaredJSON(ctx context.Context, res toolmw.Result) bool {
	if res.JSON {
		return true
	}
	call, ok := toolmw.CallFrom(ctx)
	return ok && call.Spec != nil && call.Spec.ResultJSON
}
