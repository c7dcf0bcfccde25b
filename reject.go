package toolmw

import (
	"context"
	"encoding/json"
	"reflect"

	"github.com/toolmw/toolmw/taxonomy"
)

// Reject returns the Middleware of a layer that cannot be built as asked: a
// layer package's New returns it when an option value is invalid, so the
// mistake is never silently ignored. [Wrap] and [Chain] recognise it and
// report err at start-up instead of wrapping; applied by hand, the Tool it
// returns fails every call with err and never runs the tool.
//
// err should be a tool-definition-invalid error (code option_invalid for a
// bad option); a nil err is reported as one. The Middleware is safe for
// concurrent use.
func Reject(err error) Middleware {
	if err == nil {
		err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, "a layer rejected its options")
	}
	return (&rejection{err: err}).wrap
}

// rejection is the state of a Middleware made by Reject. Its wrap method
// value is how Wrap and Chain recognise one: every method value of
// (*rejection).wrap shares one code pointer.
type rejection struct{ err error }

func (r *rejection) wrap(Tool) Tool { return r.call }

func (r *rejection) call(context.Context, json.RawMessage) (Result, error) {
	return Result{}, r.err
}

var rejectionCode = reflect.ValueOf((&rejection{}).wrap).Pointer()

// rejected returns the error of a Middleware made by Reject.
func rejected(mw Middleware) (error, bool) {
	if mw == nil || reflect.ValueOf(mw).Pointer() != rejectionCode {
		return nil, false
	}
	_, err := mw(nil)(context.Background(), nil)
	return err, true
}
