package dedupe

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/canonjson"
	"github.com/toolmw/toolmw/internal/panicked"
	"github.com/toolmw/toolmw/internal/runstate"
	"github.com/toolmw/toolmw/taxonomy"
)

// Defaults of the per-run bounds.
const (
	DefaultMaxRecords = 1024    // finished calls remembered per run
	DefaultMaxBytes   = 1 << 20 // bytes of result content held per run
)

// Option configures the dedupe layer.
//
// Options are applied once, by the constructor they are passed to; an Option may be reused and shared between goroutines.
type Option func(*config)

type config struct {
	byArgs     map[string]bool
	maxRecords int
	maxBytes   int
	err        error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("dedupe: "+format, args...))
	}
}

// WithArguments names tools whose repeats are recognised by their
// arguments too: two calls of such a tool in one run with the same JSON
// arguments are one call, whatever their call ids. Use it for
// side-effecting tools a model may call again in a later turn with a new
// call id. A name that is not a valid tool name is invalid.
func WithArguments(tools ...string) Option {
	return func(c *config) {
		for _, t := range tools {
			if !toolmw.ValidName(t) {
				c.reject("WithArguments(%q): not a tool name", t)
				return
			}
			if c.byArgs == nil {
				c.byArgs = map[string]bool{}
			}
			c.byArgs[t] = true
		}
	}
}

// WithMaxRecords bounds the finished calls remembered per run (default
// [DefaultMaxRecords]); the oldest is forgotten first. 0 means the default;
// a negative n is invalid.
func WithMaxRecords(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxRecords(%d): the bound must not be negative", n)
			return
		}
		c.maxRecords = n
	}
}

// WithMaxBytes bounds the result content held per run (default
// [DefaultMaxBytes]). 0 means the default; a negative n is invalid.
func WithMaxBytes(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.reject("WithMaxBytes(%d): the bound must not be negative", n)
			return
		}
		c.maxBytes = n
	}
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.maxRecords == 0 {
		c.maxRecords = DefaultMaxRecords
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxBytes
	}
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil.
func Validate(opts ...Option) error { return newConfig(opts).err }

// New returns the dedupe layer. The tools it wraps share its records (a
// call is identified by its tool's name among others), one set per run.
// An invalid option makes a [toolmw.Reject] middleware (see [Validate]).
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	l := &layer{config: cfg}
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return l.call(ctx, next, args)
		}
	}
}

type layer struct {
	config
	runs runstate.Slot[store]
}

// store is one run's records.
type store struct {
	mu       sync.Mutex
	m        map[string]*record
	finished []string // ids of finished records, oldest first
	bytes    int
}

// record is one call: in flight until ready is closed, then its outcome.
type record struct {
	ready     chan struct{}
	res       toolmw.Result
	err       error
	forgotten bool // the outcome was not kept: a waiting repeat runs the tool
	size      int
}

func newStore() *store { return &store{m: map[string]*record{}} }

var (
	errInDoubt = taxonomy.Failure(taxonomy.CodeDuplicateInDoubt,
		"this call was already made in this run and did not finish (it timed out or was cancelled while the tool ran); it may have acted, so it is not run again")
	errDropped = taxonomy.Failure(taxonomy.CodeDuplicateDropped,
		"this call was already made in this run; its result is no longer held, and it is not run again")
	errNotCanonical = taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "json_ambiguous", Loc: []any{},
		Msg: "Input should be one JSON value that every parser reads alike: valid UTF-8, no two keys of an object alike (also when they differ only in case), no lone surrogate escape, nesting at most 64 deep"})
)

func (l *layer) call(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	call, ok := toolmw.CallFrom(ctx)
	if !ok {
		return next(ctx, args)
	}
	run, ok := budget.RunFrom(ctx)
	if !ok {
		return next(ctx, args)
	}
	id, err := l.identity(call, args)
	if err != nil {
		return toolmw.Result{}, err
	}
	if id == "" {
		return next(ctx, args)
	}
	st := l.runs.Get(run, newStore)
	for {
		st.mu.Lock()
		rec := st.m[id]
		if rec == nil {
			rec = &record{ready: make(chan struct{})}
			st.m[id] = rec
			st.mu.Unlock()
			return l.execute(ctx, next, args, call, st, id, rec)
		}
		st.mu.Unlock()
		select {
		case <-rec.ready:
		case <-ctx.Done():
			return toolmw.Result{}, ctx.Err()
		}
		if !rec.forgotten {
			return rec.res, rec.err
		}
	}
}

// identity names the call within its run, or returns "" when it cannot be
// recognised. A call is named by what a model cannot forge from another:
// the SHA-256 of its call id as the model sent it (toolmw.Call.IDSum; not
// Call.ID, whose replaced form a model could send as its own id), or, for
// a tool deduplicated by arguments, the SHA-256 of their canonical form.
// Arguments of such a tool that have none are refused (errNotCanonical):
// two spellings that parsers read differently could otherwise pass for one
// call, or one call pass for two.
func (l *layer) identity(call toolmw.Call, args json.RawMessage) (string, error) {
	if l.byArgs[call.Tool] {
		sum, ok := canonicalSum(args)
		if !ok {
			return "", errNotCanonical
		}
		return "a\x00" + call.Tool + "\x00" + string(sum[:]), nil
	}
	sum, ok := call.IDSum()
	if !ok {
		return "", nil
	}
	return "i\x00" + call.Tool + "\x00" + string(sum[:]), nil
}

// canonicalSum returns the SHA-256 of args' canonical form (see
// internal/canonjson: object keys sorted, no spacing, strings escaped one
// way, numbers as written; absent arguments are null), or false when args
// have none.
func canonicalSum(args json.RawMessage) ([sha256.Size]byte, bool) {
	if len(args) == 0 {
		args = json.RawMessage("null")
	}
	b, ok := canonjson.Append(make([]byte, 0, len(args)), args)
	if !ok {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(b), true
}

func (l *layer) execute(ctx context.Context, next toolmw.Tool, args json.RawMessage, call toolmw.Call, st *store, id string, rec *record) (res toolmw.Result, err error) {
	returned := false
	defer func() {
		if !returned { // a panic or runtime.Goexit: record it, let it go on
			l.settle(st, id, rec, toolmw.Result{}, panicked.Err, false)
		}
	}()
	res, err = next(ctx, args)
	returned = true
	keep, kept := keeps(call, err)
	if !keep {
		l.settle(st, id, rec, toolmw.Result{}, nil, true)
		return res, err
	}
	if kept != nil {
		l.settle(st, id, rec, toolmw.Result{}, kept, false)
	} else {
		l.settle(st, id, rec, res, err, false)
	}
	return res, err
}

// keeps reports whether a call's outcome is recorded, and the error a
// repeat gets instead of err (nil: err itself). Whether the call possibly
// ran is taxonomy.EffectOf's word, the rule the limits decide on too.
func keeps(call toolmw.Call, err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case call.Idempotent:
		return false, nil // running it again is safe
	case taxonomy.NoEffect(err):
		// Nothing ran (a breaker, a limit, a decision, bad arguments: a
		// repeat asks the layers again, and a pending call resumes once
		// approved), or the error's maker vouches that nothing landed.
		return false, nil
	case unknown(err):
		return true, errInDoubt
	}
	return true, nil
}

// unknown reports whether err leaves the call's outcome unknown: it timed
// out (every timeout matches context.DeadlineExceeded), its caller's
// deadline passed or it was cancelled while the tool ran. Whatever its
// maker says of retrying, the call may have acted, and a repeat is told
// so rather than given the error, which would read as its own.
func unknown(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	te, ok := taxonomy.From(err)
	return ok && (te.Kind() == taxonomy.KindTimeout || te.Kind() == taxonomy.KindCancelled)
}

// settle finishes rec: it forgets it, or keeps its outcome within the
// run's bounds, and wakes the repeats waiting for it.
func (l *layer) settle(st *store, id string, rec *record, res toolmw.Result, err error, forget bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	defer close(rec.ready)
	if forget {
		rec.forgotten = true
		delete(st.m, id)
		return
	}
	rec.res, rec.err = res, err
	if size := len(res.Content); size > 0 {
		if st.bytes+size > l.maxBytes {
			rec.res, rec.err = toolmw.Result{}, errDropped
		} else {
			rec.size = size
			st.bytes += size
		}
	}
	st.finished = append(st.finished, id)
	for len(st.finished) > l.maxRecords {
		old := st.finished[0]
		st.finished = st.finished[1:]
		if r := st.m[old]; r != nil {
			st.bytes -= r.size
			delete(st.m, old)
		}
	}
}
