package result

import (
	"context"
	"encoding/json"
	"mime"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
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
	textCap, wholeCap := DefaultMaxBytes, DefaultMaxBinaryBytes
	if c.maxBytes > 0 {
		textCap, wholeCap = c.maxBytes, c.maxBytes
	}
	k := &checker{
		config:        c,
		textCap:       textCap,
		wholeCap:      wholeCap,
		errTooLarge:   tooLarge("the tool's result is larger than the limit of ", textCap),
		errWholeLarge: tooLarge("the tool's result is larger than the limit of ", wholeCap),
		errPartLarge:  tooLarge("a part of the tool's result is larger than the limit of ", c.maxPartBytes),
	}
	return func(next toolmw.Tool) toolmw.Tool {
		out := &outputs{}
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			res, err := next(ctx, args)
			if err != nil {
				return res, err
			}
			if err := k.check(ctx, res, out); err != nil {
				return toolmw.Result{}, err
			}
			return res, nil
		}
	}
}

func tooLarge(what string, n int) error {
	return taxonomy.ResultInvalid(taxonomy.CodeResultTooLarge, what+strconv.Itoa(n)+" bytes")
}

var (
	errNotUTF8 = taxonomy.ResultInvalid(taxonomy.CodeResultNotUTF8, "the tool's result is not valid UTF-8")
	errNotJSON = taxonomy.ResultInvalid(taxonomy.CodeResultNotJSON, "the tool's result is declared JSON and is not valid JSON")
)

// checker holds one layer's configuration and its errors, made once.
type checker struct {
	*config
	textCap, wholeCap                        int
	errTooLarge, errWholeLarge, errPartLarge error
}

// check returns the first violation in res, or nil.
func (k *checker) check(ctx context.Context, res toolmw.Result, out *outputs) error {
	var spec *toolmw.Spec
	if call, ok := toolmw.CallFrom(ctx); ok {
		spec = call.Spec
	}
	contentJSON := res.JSON || spec != nil && spec.ResultJSON && (len(res.Parts()) == 0 || res.Content != "")
	if len(res.Parts()) == 0 {
		// A text result: the checks it has always had.
		switch {
		case len(res.Content) > k.textCap:
			return k.errTooLarge
		case !utf8.ValidString(res.Content):
			return errNotUTF8
		case contentJSON && !json.Valid([]byte(res.Content)):
			return errNotJSON
		}
	} else if err := k.checkParts(res, contentJSON); err != nil {
		return err
	}
	if spec == nil || spec.OutputSchema == nil {
		return nil
	}
	return out.check(ctx, spec, res, contentJSON)
}

// checkParts checks a result with parts: the caps, then each part in order
// (its content first when it has one).
func (k *checker) checkParts(res toolmw.Result, contentJSON bool) error {
	whole, binary := res.Size(), 0
	for _, p := range res.Parts() {
		binary += len(p.Data)
	}
	switch {
	case whole-binary > k.textCap:
		return k.errTooLarge
	case whole > k.wholeCap:
		return k.errWholeLarge
	}
	first := 0 // the index of Parts[0] among the result's parts
	if res.Content != "" || res.JSON {
		first = 1
		if err := k.checkPart(0, toolmw.Part{Kind: toolmw.PartText, Text: res.Content}); err != nil {
			return err
		}
		if contentJSON && !json.Valid([]byte(res.Content)) {
			return errNotJSON
		}
	}
	for i, p := range res.Parts() {
		if err := k.checkPart(first+i, p); err != nil {
			return err
		}
	}
	return nil
}

// checkPart checks part i of a result (counted as AllParts counts): a known kind, its size, UTF-8 in
// every string, an allowed MIME type for binary content, a JSON part's
// JSON.
func (k *checker) checkPart(i int, p toolmw.Part) error {
	if !p.Kind.Valid() {
		return partInvalid(i, "is of no known kind")
	}
	if p.Size() > k.maxPartBytes {
		return k.errPartLarge
	}
	if !utf8.ValidString(p.Text) || !utf8.ValidString(p.Name) || !utf8.ValidString(p.URI) || !utf8.ValidString(p.MIMEType) {
		return errNotUTF8
	}
	switch p.Kind {
	case toolmw.PartImage, toolmw.PartAudio, toolmw.PartFile:
		if !k.mimeAllowed(p.MIMEType) {
			return partInvalid(i, "is of a MIME type the result layer does not allow")
		}
	case toolmw.PartResource:
		if len(p.Data) > 0 && !k.mimeAllowed(p.MIMEType) {
			return partInvalid(i, "is of a MIME type the result layer does not allow")
		}
	case toolmw.PartJSON:
		if !json.Valid([]byte(p.Text)) {
			return taxonomy.ResultInvalid(taxonomy.CodeResultNotJSON, "part "+strconv.Itoa(i)+" of the tool's result is a JSON part and is not valid JSON")
		}
	}
	return nil
}

// mimeAllowed reports whether mimeType parses, and its media type matches
// the allow-list. An empty MIME type is unknown, so not allowed.
func (k *checker) mimeAllowed(mimeType string) bool {
	if mimeType == "" || len(mimeType) > maxMIMETypeLen {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(mimeType)
	return err == nil && k.allowed(mediaType)
}

// partInvalid names the part by its index, never by what it holds.
func partInvalid(i int, what string) error {
	return taxonomy.ResultInvalid(taxonomy.CodeResultPartInvalid, "part "+strconv.Itoa(i)+" of the tool's result "+what)
}

// outputs is one wrapped tool's compiled output schema, made on its first
// call with one and kept for its spec.
type outputs struct {
	last atomic.Pointer[compiled]
}

type compiled struct {
	spec *toolmw.Spec
	v    *schema.Validator
	err  error
}

// validator returns the compiled output schema of spec, compiling it on
// first use.
func (o *outputs) validator(spec *toolmw.Spec) (*schema.Validator, error) {
	if c := o.last.Load(); c != nil && c.spec == spec {
		return c.v, c.err
	}
	v, err := schema.Compile(spec.OutputSchema)
	o.last.Store(&compiled{spec, v, err})
	return v, err
}

// check checks the structured output of res — its content when it is
// JSON, and every JSON part — against spec's output schema. A result
// without one does not match.
func (o *outputs) check(ctx context.Context, spec *toolmw.Spec, res toolmw.Result, contentJSON bool) error {
	v, err := o.validator(spec)
	if err != nil {
		return taxonomy.ResultInvalid(taxonomy.CodeResultSchemaMismatch, "the tool's output schema cannot be used")
	}
	docs := 0
	if contentJSON {
		docs++
		if err := validate(ctx, v, res.Content); err != nil {
			return err
		}
	}
	for _, p := range res.Parts() {
		if p.Kind != toolmw.PartJSON {
			continue
		}
		docs++
		if err := validate(ctx, v, p.Text); err != nil {
			return err
		}
	}
	if docs == 0 {
		return errNoStructured
	}
	return nil
}

var (
	errNoStructured = taxonomy.ResultInvalid(taxonomy.CodeResultSchemaMismatch,
		"the tool declares an output schema, and its result holds no JSON document")
	errMismatch = taxonomy.ResultInvalid(taxonomy.CodeResultSchemaMismatch,
		"the tool's result does not match its output schema")
	errTooCostly = taxonomy.ResultInvalid(taxonomy.CodeResultSchemaMismatch,
		"checking the tool's result against its output schema would take more than the step budget")
	errBusy = taxonomy.ResultInvalid(taxonomy.CodeResultSchemaMismatch,
		"the tool's result could not be checked against its output schema: the process already validates as many large documents as it may")
)

// validate checks one JSON document against the output schema, bounded as
// arguments are (schema.Validator.ValidateContext: a step budget, the
// context), and says what went wrong in a result's terms: value-free field
// errors, never the document.
func validate(ctx context.Context, v *schema.Validator, doc string) error {
	err := v.ValidateContext(ctx, []byte(doc), max(len(doc), 1))
	if err == nil {
		return nil
	}
	te, ok := err.(*taxonomy.ToolError)
	if !ok {
		return err // the context's cancellation, as it is
	}
	switch {
	case te.Kind() == taxonomy.KindArgsInvalid && te.Code() == taxonomy.CodeArgsInvalid:
		return errMismatch.WithFields(te.Fields()...)
	case te.Kind() == taxonomy.KindArgsInvalid:
		return errTooCostly
	case te.Kind() == taxonomy.KindRateLimited:
		return errBusy
	case te.Kind() == taxonomy.KindTimeout:
		return taxonomy.Timeout(te.Code(), "the call's deadline passed while its result was checked against its output schema", false).WithCause(te.Unwrap())
	}
	return err
}
