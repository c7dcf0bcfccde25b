package dedupe

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/internal/runstate"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/canonjson"
	"github.com/toolmw/toolmw/middleware/internal/panicked"
	"github.com/toolmw/toolmw/middleware/internal/partinfo"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the dedupe layer. The tools it wraps share its records (a
// call is identified by its tool's name among others), one set per run.
// An invalid option makes a [toolmw.Reject] middleware (see [Validate]).
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	l := &layer{config: cfg}
	if cfg.store != nil {
		l.shared = &shared{s: cfg.store, guard: storeguard.New("dedupe", cfg.storeCfg, false, cfg.clk)}
	}
	return func(next toolmw.Tool) toolmw.Tool {
		w := new(wrapped)
		state.Register(state.Default, w, publish)
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return l.call(ctx, next, args, w)
		}
	}
}

// wrapped is what package state reads of one tool the layer wraps: its
// name, from its first call, and the repeats given a recorded outcome.
type wrapped struct {
	name    state.Name
	repeats atomic.Int64
}

// publish reports w's repeats to package state.
func publish(w *wrapped, emit state.Emit) {
	name := w.name.String()
	emit(state.DedupeRepeats, name, "", float64(w.repeats.Load()))
}

// Bounds of one recorded error. A repeat of a failed call gets the
// error's [taxonomy.Info] form (see [taxonomy.Info.Err]), held to these
// bounds: its message scrubbed with the default scrubber, then cut at a
// character boundary to at most MaxErrorMessage bytes (ending in "…");
// its field errors, with their messages and string locations scrubbed,
// kept in order while there are at most MaxErrorFields of them and the
// message and the field errors together take at most MaxErrorBytes of
// text. The taxonomy bounds the rest: a code, a tool and a guardrail
// name of at most 64 bytes each, an approval id of at most 128 bytes and
// its summary of at most taxonomy.MaxApprovalSummary.
const (
	MaxErrorMessage = 1024 // bytes of a recorded error's message, scrubbed, then cut
	MaxErrorFields  = 20   // field errors a recorded error keeps
	MaxErrorBytes   = 4096 // bytes of a recorded error's message and field errors together
)

type layer struct {
	config
	runs   runstate.Slot[records]
	shared *shared // nil without WithStore
}

// records is one run's records in process.
type records struct {
	mu       sync.Mutex
	m        map[string]*record
	finished []string // ids of finished records, oldest first
	bytes    int
}

// record is one call: in flight until ready is closed, then its outcome.
type record struct {
	ready chan struct{}
	// args is the hash of the call's arguments (see argsSum), set when
	// the record is made and never changed: a call with the record's id
	// and other arguments is not its repeat.
	args      [sha256.Size]byte
	res       toolmw.Result
	err       error
	forgotten bool // the outcome was not kept: a waiting repeat runs the tool
	size      int  // bytes of result (toolmw.Result.Size) or error text held
}

func newRecords() *records { return &records{m: map[string]*record{}} }

var (
	errInDoubt = taxonomy.Failure(taxonomy.CodeDuplicateInDoubt,
		"this call was already made in this run and did not finish (it timed out or was cancelled while the tool ran); it may have acted, so it is not run again")
	errDropped = taxonomy.Failure(taxonomy.CodeDuplicateDropped,
		"this call was already made in this run; its result is no longer held, and it is not run again")
	errReused = taxonomy.NotPermitted(taxonomy.CodeCallIDReused,
		"this call id was already used in this run for a call of this tool with other arguments; this call was not run: make it under a new call id")
	errNotCanonical = taxonomy.ArgsInvalid(taxonomy.FieldError{Type: "json_ambiguous", Loc: []any{},
		Msg: "Input should be one JSON value that every parser reads alike: valid UTF-8, no two keys of an object alike (also when they differ only in case), no lone surrogate escape, nesting at most 64 deep"})
)

func (l *layer) call(ctx context.Context, next toolmw.Tool, args json.RawMessage, w *wrapped) (toolmw.Result, error) {
	call, ok := toolmw.CallFrom(ctx)
	if !ok {
		return next(ctx, args)
	}
	w.name.Learn(call.Tool)
	run, ok := budget.RunFrom(ctx)
	if !ok {
		return next(ctx, args)
	}
	id, sum, err := l.identity(call, args)
	if err != nil {
		return toolmw.Result{}, err
	}
	if id == "" {
		return next(ctx, args)
	}
	if l.shared != nil && run.ID() != "" {
		res, handled, err := l.sharedCall(ctx, next, args, call, run.ID(), id, sum, w)
		if handled {
			return res, err
		}
	}
	st := l.runs.Get(run, newRecords)
	for {
		st.mu.Lock()
		rec := st.m[id]
		if rec == nil {
			rec = &record{ready: make(chan struct{}), args: sum}
			st.m[id] = rec
			st.mu.Unlock()
			return l.execute(ctx, next, args, call, st, id, rec)
		}
		st.mu.Unlock()
		if rec.args != sum {
			// The model re-used the id for another request: answering
			// it with this record would report the other call as done.
			return toolmw.Result{}, errReused
		}
		select {
		case <-rec.ready:
		case <-ctx.Done():
			return toolmw.Result{}, ctx.Err()
		}
		if !rec.forgotten {
			w.repeats.Add(1)
			return partinfo.Clone(rec.res), rec.err // a copy: no repeat changes what another gets
		}
	}
}

// identity names the call within its run, or returns "" when it cannot be
// recognised, and the hash of its arguments (argsSum). A call is named by
// what a model cannot forge from another: the SHA-256 of its call id as
// the model sent it (toolmw.Call.IDSum; not Call.ID, whose replaced form a
// model could send as its own id), or, for a tool deduplicated by
// arguments, the SHA-256 of their canonical form. Arguments of such a tool
// that have none are refused (errNotCanonical): two spellings that parsers
// read differently could otherwise pass for one call, or one call pass for
// two.
func (l *layer) identity(call toolmw.Call, args json.RawMessage) (string, [sha256.Size]byte, error) {
	if l.byArgs[call.Tool] {
		sum, ok := canonicalSum(args)
		if !ok {
			return "", sum, errNotCanonical
		}
		return "a\x00" + call.Tool + "\x00" + string(sum[:]), sum, nil
	}
	idSum, ok := call.IDSum()
	if !ok {
		return "", [sha256.Size]byte{}, nil
	}
	return "i\x00" + call.Tool + "\x00" + string(idSum[:]), argsSum(args), nil
}

// argsSum returns the hash that tells whether two calls with one call id
// carry the same arguments: the SHA-256 of their canonical form, so that
// key order, spacing and escapes do not count; or, for arguments without
// one (not one JSON value, duplicate keys, keys alike but for case), the
// SHA-256 of their bytes as given, in a domain of its own, so that only
// the same bytes are the same arguments.
func argsSum(args json.RawMessage) [sha256.Size]byte {
	if sum, ok := canonicalSum(args); ok {
		return sum
	}
	h := sha256.New()
	h.Write([]byte("toolmw dedupe raw arguments\x00"))
	h.Write(args)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// canonicalSum returns the SHA-256 of args' canonical form (see
// middleware/internal/canonjson: object keys sorted, no spacing, strings escaped one
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

func (l *layer) execute(ctx context.Context, next toolmw.Tool, args json.RawMessage, call toolmw.Call, st *records, id string, rec *record) (res toolmw.Result, err error) {
	returned := false
	defer func() {
		if !returned { // a panic or runtime.Goexit: record it, let it go on
			l.settle(st, id, rec, toolmw.Result{}, outcome{err: panicked.Err}, false)
		}
	}()
	res, err = next(ctx, args)
	returned = true
	keep, kept := keeps(call, err)
	switch {
	case !keep:
		l.settle(st, id, rec, toolmw.Result{}, outcome{}, true)
	case kept != nil:
		l.settle(st, id, rec, toolmw.Result{}, outcome{err: kept}, false)
	case err != nil:
		l.settle(st, id, rec, toolmw.Result{}, bound(err), false)
	default:
		l.settle(st, id, rec, res, outcome{}, false)
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

// outcome is the error a repeat gets: err itself when size is 0 (one of
// the layer's own errors, made once), else the bounded record of a
// failure, in full (err, holding size bytes of text) and without its
// message, field errors and approval summary (slim), for a run whose
// records already hold WithMaxBytes.
type outcome struct {
	err, slim error
	size      int
}

// bound returns the outcome a repeat of a call that failed with err gets:
// err's taxonomy.Info form, held to MaxErrorMessage, MaxErrorFields and
// MaxErrorBytes. The error err itself is not kept: its cause, and any
// message or field of any size, would live as long as the run.
func bound(err error) outcome {
	info := taxonomy.InfoOf(err)
	info.Message = boundMessage(info.Message)
	size := len(info.Message)
	fields := info.Fields
	info.Fields = nil
	for _, f := range fields {
		f, n, ok := boundField(f)
		if !ok || len(info.Fields) == MaxErrorFields || size+n > MaxErrorBytes {
			break
		}
		info.Fields = append(info.Fields, f)
		size += n
	}
	if info.Approval != nil {
		size += len(info.Approval.Summary)
	}
	out := outcome{err: info.Err(), size: size}
	info.Message, info.Fields = "", nil
	if info.Approval != nil {
		info.Approval.Summary = ""
	}
	out.slim = info.Err()
	return out
}

// scrubWindow is how much of a long message is scrubbed before it is cut
// to MaxErrorMessage: past the cut, enough for the longest token the
// scrubber reads whole (4 KiB), so a secret that straddles the cut is
// found and replaced whole.
const scrubWindow = MaxErrorMessage + 8<<10

// boundMessage returns msg scrubbed, then made valid UTF-8 and cut at a
// character boundary to at most MaxErrorMessage bytes, ending in "…" when
// it was cut.
func boundMessage(msg string) string {
	if len(msg) > scrubWindow {
		msg = msg[:scrubWindow]
	}
	msg = scrub.String(msg)
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	if len(msg) <= MaxErrorMessage {
		return msg
	}
	const ellipsis = "…"
	cut := MaxErrorMessage - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + ellipsis
}

// boundField returns f with its message and the strings of its location
// scrubbed, and the bytes of text it holds; ok is false when its location
// holds something other than strings and numbers, whose size is unknown.
func boundField(f taxonomy.FieldError) (taxonomy.FieldError, int, bool) {
	f.Msg = scrub.String(f.Msg)
	n := len(f.Type) + len(f.Msg)
	loc := make([]any, len(f.Loc))
	for i, x := range f.Loc {
		switch v := x.(type) {
		case string:
			v = scrub.String(v)
			loc[i], n = v, n+len(v)
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, json.Number:
			loc[i], n = v, n+8
		default:
			return f, 0, false
		}
	}
	if f.Loc != nil {
		f.Loc = loc
	}
	return f, n, true
}

// settle finishes rec: it forgets it, or keeps its outcome within the
// run's bounds, and wakes the repeats waiting for it.
func (l *layer) settle(st *records, id string, rec *record, res toolmw.Result, o outcome, forget bool) {
	res = partinfo.Clone(res) // a copy, made outside the lock: the first caller cannot change what repeats get
	st.mu.Lock()
	defer st.mu.Unlock()
	defer close(rec.ready)
	if forget {
		rec.forgotten = true
		delete(st.m, id)
		return
	}
	rec.res, rec.err = res, o.err
	if size := res.Size(); size > 0 {
		if st.bytes+size > l.maxBytes {
			rec.res, rec.err = toolmw.Result{}, errDropped
		} else {
			rec.size = size
			st.bytes += size
		}
	}
	if o.size > 0 {
		if st.bytes+o.size > l.maxBytes {
			rec.err = o.slim
		} else {
			rec.size = o.size
			st.bytes += o.size
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
