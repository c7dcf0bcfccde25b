package redact

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"sync"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the scrubbing middleware. Given an option value it cannot
// use, it returns a [toolmw.Reject] of the [Validate] error, which
// toolmw.Wrap reports at start-up. It holds no per-tool state; a
// scrub.Scrubber is safe for concurrent use, so one middleware may serve
// many tools at once.
func New(opts ...Option) toolmw.Middleware {
	c := newConfig(opts)
	if c.err != nil {
		return toolmw.Reject(c.err)
	}
	s := c.scrubber
	if s == nil {
		s = scrub.Default()
	}
	results := c.results
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(withSession(ctx, s), args)
			if err == nil && !results {
				return res, nil
			}
			if results {
				res = scrubResult(s, res)
			}
			return res, scrubError(s, err)
		}
	}
}

// processKey is the key of WithKeyedHash(nil): 32 random bytes, made once.
var processKey = sync.OnceValue(func() []byte {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand, Go 1.24)
	return key
})

// scrubResult returns res with its content and its parts scrubbed
// (scrubParts).
func scrubResult(s *scrub.Scrubber, res toolmw.Result) toolmw.Result {
	if len(res.Parts()) > 0 {
		res = res.WithParts(scrubParts(s, res.Parts())...)
	}
	content := s.String(res.Content)
	if content == res.Content {
		return res
	}
	res.Content = content
	if res.JSON && !json.Valid([]byte(content)) {
		res.JSON = false
	}
	return res
}

// scrubError returns err with the message of its typed error scrubbed, as
// the package documentation describes.
func scrubError(s *scrub.Scrubber, err error) error {
	if err == nil {
		return nil
	}
	if te, ok := err.(*taxonomy.ToolError); ok {
		return scrubToolError(s, te)
	}
	if _, ok := taxonomy.From(err); !ok {
		return err
	}
	info := taxonomy.InfoOf(err)
	msg := s.String(info.Message)
	fields, fieldsChanged := scrubFields(s, info.Fields)
	if text := err.Error(); msg == info.Message && !fieldsChanged && s.String(text) == text {
		return err
	}
	info.Message, info.Fields = msg, fields
	return info.Err().WithCause(err)
}

// scrubToolError returns te with its message and field-error messages
// scrubbed, or te itself when they are clean.
func scrubToolError(s *scrub.Scrubber, te *taxonomy.ToolError) error {
	out := te
	if msg := s.String(te.Message()); msg != te.Message() {
		out = out.WithMessage(msg)
	}
	if fields, changed := scrubFields(s, te.Fields()); changed {
		out = out.WithFields(fields...)
	}
	return out
}

// scrubFields returns fields with their messages and the keys of their
// paths scrubbed (a key is the model's input, and may be a secret), in a
// new slice when any changed; otherwise fields itself and false.
func scrubFields(s *scrub.Scrubber, fields []taxonomy.FieldError) ([]taxonomy.FieldError, bool) {
	var out []taxonomy.FieldError
	for i, f := range fields {
		msg := s.String(f.Msg)
		loc, locChanged := scrubLoc(s, f.Loc)
		if msg == f.Msg && !locChanged {
			continue
		}
		if out == nil {
			out = append([]taxonomy.FieldError(nil), fields...)
		}
		out[i].Msg, out[i].Loc = msg, loc
	}
	if out == nil {
		return fields, false
	}
	return out, true
}

// scrubLoc returns loc with its string keys scrubbed, in a new slice when
// any changed; otherwise loc itself and false.
func scrubLoc(s *scrub.Scrubber, loc []any) ([]any, bool) {
	var out []any
	for i, p := range loc {
		key, ok := p.(string)
		if !ok {
			continue
		}
		if clean := s.String(key); clean != key {
			if out == nil {
				out = append([]any(nil), loc...)
			}
			out[i] = clean
		}
	}
	if out == nil {
		return loc, false
	}
	return out, true
}
