package toolmw

import (
	"context"
	"sync/atomic"
)

// Call describes one call of a tool, as the layers and the tool itself see it
// through [CallFrom].
type Call struct {
	Tool       string // the tool's name
	ID         string // the model's call id, set with WithCallID; may be ""
	Idempotent bool   // whether repeating the call is safe (from the Spec)
	Attempt    int    // the current attempt, from 1; retry layers advance it
	Spec       *Spec  // the full spec; shared and read-only
}

type ctxKey int

const (
	callKey ctxKey = iota
	callIDKey
)

// callCtx is the context of one call through a Wrap'd tool: the parent plus
// the call's record, in one allocation.
type callCtx struct {
	context.Context
	spec    *Spec
	id      string
	attempt atomic.Int32
}

func (c *callCtx) Value(key any) any {
	if key == any(callKey) {
		return c
	}
	return c.Context.Value(key)
}

// WithCallID returns a context that gives the next call through a Wrap'd
// tool the model's call id, so telemetry and events can name it.
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey, id)
}

// CallFrom returns the Call carried by ctx, and whether there is one: a
// context inside a tool made by [Wrap] always carries one.
func CallFrom(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey).(*callCtx)
	if !ok {
		return Call{}, false
	}
	return Call{
		Tool:       c.spec.Name,
		ID:         c.id,
		Idempotent: c.spec.Idempotent,
		Attempt:    int(c.attempt.Load()),
		Spec:       c.spec,
	}, true
}

// SetAttempt records that attempt n (from 1) of the call carried by ctx is
// starting. Retry layers call it before each attempt; the tool and every
// layer then see the number through CallFrom, and layers outside the retry
// read the number of attempts made once the call returns. It does nothing
// when ctx carries no call.
func SetAttempt(ctx context.Context, n int) {
	if c, ok := ctx.Value(callKey).(*callCtx); ok {
		c.attempt.Store(int32(n))
	}
}

func newCall(ctx context.Context, spec *Spec) *callCtx {
	c := &callCtx{Context: ctx, spec: spec}
	if id, ok := ctx.Value(callIDKey).(string); ok {
		c.id = id
	}
	c.attempt.Store(1)
	return c
}
