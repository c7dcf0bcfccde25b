package result

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// DefaultMaxBytes is the default size cap of a result's content: 1 MiB.
const DefaultMaxBytes = 1 << 20

// An Option configures [New].
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	maxBytes int
	scrubber *scrub.Scrubber
	invalid  []string // the options given a value they cannot use
}

func newConfig(opts []Option) *config {
	c := &config{maxBytes: DefaultMaxBytes}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c
}

// WithMaxBytes caps the size of a result's content at n bytes (n >= 1).
func WithMaxBytes(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.invalid = append(c.invalid, "WithMaxBytes needs n >= 1")
			return
		}
		c.maxBytes = n
	}
}

// WithScrub redacts the content of results that pass the checks with s. Nil
// means no scrubbing, the default.
func WithScrub(s *scrub.Scrubber) Option {
	return func(c *config) { c.scrubber = s }
}

// Validate reports the options given a value they cannot use, as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(opts ...Option) error {
	c := newConfig(opts)
	if len(c.invalid) == 0 {
		return nil
	}
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
		"result: "+strings.Join(c.invalid, "; "))
}

var (
	errNotUTF8 = taxonomy.ResultInvalid(taxonomy.CodeResultNotUTF8, "the tool's result is not valid UTF-8")
	errNotJSON = taxonomy.ResultInvalid(taxonomy.CodeResultNotJSON, "the tool's result is declared JSON and is not valid JSON")
)

// New returns the result-checking middleware. See the package documentation
// for the checks.
func New(opts ...Option) toolmw.Middleware {
	c := newConfig(opts)
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
			isJSON := declaredJSON(ctx, res)
			if isJSON && !json.Valid([]byte(res.Content)) {
				return toolmw.Result{}, errNotJSON
			}
			if c.scrubber != nil {
				res = scrubbed(c.scrubber, res, isJSON)
			}
			return res, nil
		}
	}
}

// declaredJSON reports whether res must be JSON: it says so, or its tool's
// spec does.
func declaredJSON(ctx context.Context, res toolmw.Result) bool {
	if res.JSON {
		return true
	}
	call, ok := toolmw.CallFrom(ctx)
	return ok && call.Spec != nil && call.Spec.ResultJSON
}

// scrubbed returns res with its content redacted. A JSON result that a
// redaction made invalid is passed on as text.
func scrubbed(s *scrub.Scrubber, res toolmw.Result, isJSON bool) toolmw.Result {
	out := s.String(res.Content)
	if out == res.Content {
		return res
	}
	res.Content = out
	if isJSON && !json.Valid([]byte(out)) {
		res.JSON = false
	}
	return res
}
