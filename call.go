package toolmw

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"sync/atomic"

	"github.com/toolmw/toolmw/scrub"
)

// Call describes one call of a tool, as the layers and the tool itself see it
// through [CallFrom].
type Call struct {
	Tool       string // the tool's name
	ID         string // the model's call id, set with WithCallID, as [SafeCallID] makes it; may be ""
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
// tool the model's call id, so telemetry and events can name it. The id is
// data from the model: the Call carries it as [SafeCallID] makes it. Keep
// the original to answer the model.
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
		c.id = SafeCallID(id)
	}
	c.attempt.Store(1)
	return c
}

// MaxCallIDLen is the longest call id a Call carries as given.
const MaxCallIDLen = 128

// SafeCallID returns a call id as layers, logs, spans and events see it: id
// itself when it is "" or at most [MaxCallIDLen] bytes of ASCII letters,
// digits and "_-.:" (the shapes model APIs use, such as call_a1B2 and
// toolu_01A…) in which the default scrubber finds nothing; otherwise "invalid_call_id_" and 16 hex digits of a keyed
// hash of id, with a key made at random when the process starts. So an
// oversize id or one holding anything else (a token, markup, a newline)
// never reaches a sink, while the same bad id reads the same within one
// process. It allocates only for an id it replaces.
func SafeCallID(id string) string {
	if len(id) <= MaxCallIDLen && safeID(id) && scrub.String(id) == id {
		return id
	}
	m := hmac.New(sha256.New, callIDKeyBytes[:])
	m.Write([]byte(id))
	return "invalid_call_id_" + hex.EncodeToString(m.Sum(nil)[:8])
}

func safeID(id string) bool {
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// callIDKeyBytes keys the hash of replaced call ids, for this process only.
var callIDKeyBytes = func() (k [32]byte) {
	_, _ = rand.Read(k[:]) // crypto/rand.Read never fails (Go 1.24+)
	return k
}()
