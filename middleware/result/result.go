package result

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
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

// WithMaxBytes caps the size of a result's content at n bytes. 0 means the
// default, [DefaultMaxBytes]; a negative n is ignored and reported by
// [Validate].
func WithMaxBytes(n int) Option {
	return func(c *config) {
		switch {
		case n < 0:
			c.invalid = append(c.invalid, "WithMaxBytes needs n >= 0")
		case n == 0:
			c.maxBytes = DefaultMaxBytes
		default:
			c.maxBytes = n
		}
	}
}

// err returns the options given a value they cannot use, as one
// tool-definition-invalid/option_invalid error, or nil.
func (c *config) err() error {
	if len(c.invalid) == 0 {
		return nil
	}
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
		"result: "+strings.Join(c.invalid, "; "))
}

// Validate reports the options given a value they cannot use, as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(opts ...Option) error {
	return newConfig(opts).err()
}

var (
	errNotUTF8 = taxonomy.ResultInvalid(taxonomy.CodeResultNotUTF8, "the tool's result is not valid UTF-8")
	errNotJSON = taxonomy.ResultInvalid(taxonomy.CodeResultNotJSON, "the tool's result is declared JSON and is not valid JSON")
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

// declaredJSON reports whether res must be JSON: it says so, or its tool's
// spec does.
func declaredJSON(ctx context.Context, res toolmw.Result) bool {
	if res.JSON {
		return true
	}
	call, ok := toolmw.CallFrom(ctx)
	return ok && call.Spec != nil && call.Spec.ResultJSON
}
