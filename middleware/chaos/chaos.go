package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the chaos layer: it injects the faults given with
// [WithFault] into the calls it is enabled for ([WithEnabled], [Enable],
// [WithEnabledWhen]), each at its rate. Without a fault the layer is off
// and returns the tool unchanged. An invalid option value makes a
// [toolmw.Reject] middleware, which toolmw.Wrap reports at start-up (see
// [Validate]). Each tool it wraps counts its own calls (see the package
// documentation on determinism). The returned Middleware and the Tools it
// makes are safe for concurrent use.
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	if len(cfg.faults) == 0 {
		return func(next toolmw.Tool) toolmw.Tool { return next }
	}
	if !cfg.seeded {
		cfg.seed = newSeed()
	}
	p := newPlan(cfg.faults)
	return func(next toolmw.Tool) toolmw.Tool {
		l := &layer{config: cfg, plan: p, next: next}
		return l.call
	}
}

// newSeed draws a seed for a layer given none: runs then differ.
func newSeed() uint64 { return rand.Uint64() }

// Target is what [WithEnabledWhen]'s predicate decides on: one attempt of
// a call.
type Target struct {
	Run     string // the run's id (budget.Run.ID), or "" when the call carries no run or the run no id
	Tool    string // the tool's name, or "" for a call not made through toolmw.Wrap
	Attempt int    // the attempt, from 1 (0 outside toolmw.Wrap)
}

// Injection describes one fault injected, for [WithOnInject].
type Injection struct {
	Fault   string // what was injected: the name toolmw.Call.Chaos and the span carry ("failure", "latency", …)
	Tool    string // the tool's name, or ""
	Run     string // the run's id, or ""
	CallID  string // the model's call id (toolmw.Call.ID), or ""
	Attempt int    // the attempt, from 1 (0 outside toolmw.Wrap)
	// Seq is the number, from 1, of the call among those of its tool
	// (or of the store operation among those of its layer and Op) that
	// the injector was enabled for.
	Seq   uint64
	Layer string // for a store's fault: the layer whose store it is ("breaker", "retry_budget", …); "" for a call's
	Op    string // for a store's fault: the operation ("acquire", "take", …); "" for a call's
}

// layer is the chaos layer around one tool.
type layer struct {
	config
	plan plan
	next toolmw.Tool
	seq  atomic.Uint64 // the calls it was enabled for
}

func (l *layer) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	if !l.enabled && l.when == nil && !switched.Load() {
		return l.next(ctx, args) // disabled: no context is read
	}
	return l.decide(ctx, args)
}

func (l *layer) decide(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	c, t, ok := l.target(ctx)
	if !ok {
		return l.next(ctx, args)
	}
	seq := l.seq.Add(1)
	var u float64
	if c.ID != "" {
		u = unit(callDraw(l.seed, t, c.ID))
	} else {
		u = seqUnit(l.seed, t.Tool, "", seq)
	}
	f, ok := pick(l.plan.bands(t.Tool), u)
	if !ok {
		return l.next(ctx, args)
	}
	name := f.Name()
	toolmw.SetChaos(ctx, name)
	if l.onInject != nil {
		l.onInject(Injection{Fault: name, Tool: t.Tool, Run: t.Run, CallID: c.ID, Attempt: t.Attempt, Seq: seq})
	}
	return l.inject(ctx, f, c, args)
}

// target reads the call of ctx and reports whether the layer is enabled
// for it.
func (c *config) target(ctx context.Context) (toolmw.Call, Target, bool) {
	sw := switchOf(ctx)
	if sw == switchOff {
		return toolmw.Call{}, Target{}, false
	}
	call, _ := toolmw.CallFrom(ctx)
	t := Target{Tool: call.Tool, Attempt: call.Attempt}
	if run, ok := budget.RunFrom(ctx); ok {
		t.Run = run.ID()
	}
	on := sw == switchOn || c.enabled || c.when != nil && c.when(t)
	return call, t, on
}

// msgDeadline is the timeout layer's message for a caller's deadline.
const msgDeadline = "the caller's deadline passed"

func (l *layer) inject(ctx context.Context, f Fault, c toolmw.Call, args json.RawMessage) (toolmw.Result, error) {
	switch f.kind {
	case failure:
		return toolmw.Result{}, f.failure
	case latency:
		if err := l.wait(ctx, f.d); err != nil {
			return toolmw.Result{}, err // as a tool that honours its context
		}
		return l.next(ctx, args)
	case timeout:
		if err := l.wait(ctx, f.d); err != nil {
			if err == context.DeadlineExceeded {
				return toolmw.Result{}, taxonomy.Timeout(taxonomy.CodeDeadlineExceeded, msgDeadline, false).WithCause(err)
			}
			return toolmw.Result{}, err
		}
		return toolmw.Result{}, taxonomy.Timeout(taxonomy.CodeTimeout, f.msg, c.Idempotent).WithCause(context.DeadlineExceeded)
	case panicking:
		panic(PanicValue)
	}
	// A malformed or oversized result: the tool runs, and what it
	// returned is replaced.
	res, err := l.next(ctx, args)
	if err != nil {
		return res, err
	}
	return toolmw.Result{Content: f.content, JSON: res.JSON}, nil
}

// wait waits d on the layer's clock, or until ctx ends, and returns ctx's
// error then.
func (c *config) wait(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := c.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// PanicValue is what an injected [Panic] panics with. The recovery layer
// turns it into tool-failed/tool_panicked, as any panic, and passes the
// value to its debug hook only.
const PanicValue = "chaos: injected panic"

// Fault is one kind of failure to inject, made by [Failure], [Latency],
// [Timeout], [Panic], [MalformedResult], [OversizedResult] or
// [StoreFailure]. The zero Fault is invalid. A Fault is a plain value,
// safe for concurrent use.
type Fault struct {
	kind     faultKind
	failure  taxonomy.Error // failure
	storeErr error          // storeFailure
	d        time.Duration  // latency, timeout
	msg      string         // timeout
	content  string         // malformed, oversized
	err      string         // why the fault is invalid, reported by WithFault and WithStoreFault
}

type faultKind uint8

const (
	none faultKind = iota
	failure
	latency
	timeout
	panicking
	malformed
	oversized
	storeFailure
)

// faultNames are the names of the faults, as toolmw.Call.Chaos and the
// span attribute toolmw.chaos carry them.
var faultNames = [...]string{
	none:         "none",
	failure:      "failure",
	latency:      "latency",
	timeout:      "timeout",
	panicking:    "panic",
	malformed:    "malformed_result",
	oversized:    "oversized_result",
	storeFailure: "store_failure",
}

// Name returns the fault's name, as toolmw.Call.Chaos and the span
// attribute toolmw.chaos carry it: "failure", "latency", "timeout",
// "panic", "malformed_result", "oversized_result" or "store_failure" (a
// latency injected into a store is "store_latency").
func (f Fault) Name() string { return faultNames[f.kind] }

// String describes the fault: its name and what it injects ("failure
// rate-limited/upstream_rate_limited", "latency 2s").
func (f Fault) String() string {
	switch f.kind {
	case failure:
		if f.failure != nil {
			return fmt.Sprintf("failure %s/%s", f.failure.Kind(), f.failure.Code())
		}
	case latency, timeout:
		return fmt.Sprintf("%s %v", f.Name(), f.d)
	case oversized:
		return fmt.Sprintf("%s %d bytes", f.Name(), len(f.content))
	}
	return f.Name()
}

// Failure injects err: the call ends with it and the tool does not run,
// as if the tool had returned it. Any kind and code of the taxonomy, with
// its retryability and RetryAfter: taxonomy.Transient("upstream_unavailable",
// …), taxonomy.New(taxonomy.KindRateLimited, taxonomy.CodeUpstreamRateLimited,
// …).WithRetryAfter(2*time.Second). A nil err makes an invalid fault.
func Failure(err taxonomy.Error) Fault {
	if te, ok := err.(*taxonomy.ToolError); err == nil || ok && te == nil {
		return Fault{kind: failure, err: "Failure(nil): a fault needs the error it injects"}
	}
	return Fault{kind: failure, failure: err}
}

// Latency delays the call by d, then runs the tool; a context that ends
// first ends the call with its error (context.Canceled or
// context.DeadlineExceeded), as a tool that honours its context does, and
// the tool does not run. Given to [WithStoreFault], it delays a store's
// operation likewise: one longer than the store's timeout is a store that
// does not answer. 0 marks the call and delays nothing; a negative d makes
// an invalid fault.
func Latency(d time.Duration) Fault {
	if d < 0 {
		return Fault{kind: latency, d: d, err: fmt.Sprintf("Latency(%v): a latency must not be negative", d)}
	}
	return Fault{kind: latency, d: d}
}

// Timeout waits d (0: not at all), then ends the call as the timeout
// layer ends an attempt that outran its time: tool-timeout with code
// timeout, matching context.DeadlineExceeded, retryable only when the call
// is idempotent, an outcome that may have run (taxonomy.EffectOf says
// possible). The tool does not run. A context that ends during the wait
// ends the call as the timeout layer would: context.Canceled as is, the
// caller's deadline as tool-timeout/deadline_exceeded. A negative d makes
// an invalid fault.
func Timeout(d time.Duration) Fault {
	if d < 0 {
		return Fault{kind: timeout, d: d, err: fmt.Sprintf("Timeout(%v): a timeout must not be negative", d)}
	}
	msg := "the attempt did not finish within its time"
	if d > 0 {
		msg = fmt.Sprintf("the attempt did not finish within %v", d) // the timeout layer's words
	}
	return Fault{kind: timeout, d: d, msg: msg}
}

// Panic makes the call panic with [PanicValue] instead of running the
// tool: the recovery layer, where there is one, makes it
// tool-failed/tool_panicked.
func Panic() Fault { return Fault{kind: panicking} }

// MalformedContent is the Content of an injected [MalformedResult]: it is
// neither valid UTF-8 nor JSON.
const MalformedContent = "\xff\xfe{\"result\": tru"

// MalformedResult runs the tool and, when it succeeds, replaces its result
// with [MalformedContent] (its JSON flag kept): what a broken upstream
// sends. The result layer, where there is one, refuses it as
// tool-result-invalid (result_not_utf8).
func MalformedResult() Fault {
	return Fault{kind: malformed, content: MalformedContent}
}

// DefaultOversizedBytes is the size of an [OversizedResult] of 0: twice
// the result layer's default cap.
const DefaultOversizedBytes = 2 << 20

// OversizedResult runs the tool and, when it succeeds, replaces its
// result with a JSON string of n bytes (its JSON flag kept): valid UTF-8
// and JSON, only too large. The result layer, where there is one, refuses
// one over its cap as tool-result-invalid/result_too_large. 0 means
// [DefaultOversizedBytes]; an n below 2 (the quotes) makes an invalid
// fault. The n bytes are made once, here, and shared by every call.
func OversizedResult(n int) Fault {
	switch {
	case n == 0:
		n = DefaultOversizedBytes
	case n < 2:
		return Fault{kind: oversized, err: fmt.Sprintf("OversizedResult(%d): a result of at least 2 bytes, a JSON string", n)}
	}
	return Fault{kind: oversized, content: `"` + strings.Repeat("x", n-2) + `"`}
}

// StoreFailure makes a store's operation fail with err, changing nothing,
// for [WithStoreFault]. nil means the default: a refused TCP connection
// (*net.OpError wrapping syscall.ECONNREFUSED), what a client of a store
// that is down reports.
func StoreFailure(err error) Fault {
	if err == nil {
		err = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	}
	return Fault{kind: storeFailure, storeErr: err}
}

// The context switch.

type ctxKey int

const switchKey ctxKey = 0

type setting uint8

const (
	switchUnset setting = iota
	switchOn
	switchOff
)

// switched is set once any context was Enabled: until then a layer that
// no option enables reads no context, so that chaos compiled in and
// never switched on costs a load of this flag per call.
var switched atomic.Bool

// Enable returns a copy of ctx that turns every chaos layer (and
// [StoreFaults]) on for the calls made with it, or with a context derived
// from it, unless a [Disable] below it turns them off again: give it to a
// run's context to rehearse failure in that run only. Once a process has
// called Enable, the layers that no option enables read the context of
// each call (a few nanoseconds); until then they do not.
func Enable(ctx context.Context) context.Context {
	switched.Store(true)
	return context.WithValue(ctx, switchKey, switchOn)
}

// Disable returns a copy of ctx that turns every chaos layer (and
// [StoreFaults]) off for the calls made with it, or with a context derived
// from it, whatever their options say, unless an [Enable] below it turns
// them on again.
func Disable(ctx context.Context) context.Context {
	return context.WithValue(ctx, switchKey, switchOff)
}

func switchOf(ctx context.Context) setting {
	s, _ := ctx.Value(switchKey).(setting)
	return s
}

// The decisions.

// band is a fault and the upper end of its share of [0, 1).
type band struct {
	upto  float64
	fault Fault
}

// plan holds the bands of every name: a tool's (or a store layer's) faults
// in the order given, each taking its rate of [0, 1) after the one before.
type plan struct {
	all   []band            // for a name no rule names
	named map[string][]band // for the names rules name
}

func newPlan(rules []rule) plan {
	p := plan{named: map[string][]band{}}
	for _, r := range rules {
		for _, n := range r.names {
			p.named[n] = nil
		}
	}
	bandsFor := func(name string, named bool) []band {
		var bs []band
		var upto float64
		for _, r := range rules {
			if r.names != nil && (!named || !contains(r.names, name)) {
				continue
			}
			upto += r.rate
			bs = append(bs, band{upto: upto, fault: r.fault})
		}
		return bs
	}
	p.all = bandsFor("", false)
	for n := range p.named {
		p.named[n] = bandsFor(n, true)
	}
	return p
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

func (p *plan) bands(name string) []band {
	if bs, ok := p.named[name]; ok {
		return bs
	}
	return p.all
}

// pick returns the fault whose band holds u, if any.
func pick(bs []band, u float64) (Fault, bool) {
	for _, b := range bs {
		if u < b.upto {
			return b.fault, true
		}
	}
	return Fault{}, false
}

// Domains keep the ways of drawing apart.
const (
	domainSeq    = 0x5e9
	domainCall   = 0xca11
	domainJitter = 0x717e
)

// blockBits sets the blocks of the sequence draws: 1<<blockBits
// consecutive calls of a tool draw from a pseudo-random permutation of as
// many strata of [0, 1), so that each block of 1,024 calls gets each
// fault's share to within a call or two, and 10,000 calls to within a few
// (1,024 strata: fine enough for rates of a tenth of a percent, few
// enough that a run of a few thousand calls ends in whole blocks mostly).
const blockBits = 10

// seqUnit is the draw, in [0, 1), of the seq-th (from 1) enabled call of
// tool (or operation op of a store's layer, tool then naming the layer):
// the stratum the block's permutation gives its place, and a point within
// it. Within a block the draws are as independent as draws without
// replacement can be: a call after an injected one is injected with the
// rate's probability, less a 1,024th, so runs of failures happen as they
// would.
func seqUnit(seed uint64, tool, op string, seq uint64) float64 {
	i := seq - 1
	key := mix(seed ^ domainSeq)
	key = mix(key ^ hashString(tool))
	key = mix(key ^ hashString(op))
	key = mix(key ^ i>>blockBits)
	pos := i & (1<<blockBits - 1)
	stratum := permute(pos, key)
	within := unit(mix(key ^ domainJitter<<32 ^ pos))
	return (float64(stratum) + within) / (1 << blockBits)
}

// permute is a pseudo-random permutation of [0, 1<<blockBits) chosen by
// key: a four-round Feistel network, a bijection whatever its round
// function (here mix).
func permute(x, key uint64) uint64 {
	const half = blockBits / 2
	const mask = 1<<half - 1
	l, r := x>>half, x&mask
	for round := range uint64(4) {
		l, r = r, l^mix(key^round<<32^r)&mask
	}
	return l<<half | r
}

// callDraw is the draw of an attempt of the call id of a run.
func callDraw(seed uint64, t Target, id string) uint64 {
	h := mix(seed ^ domainCall)
	h = mix(h ^ hashString(t.Tool))
	h = mix(h ^ hashString(t.Run))
	h = mix(h ^ hashString(id))
	return mix(h ^ uint64(t.Attempt))
}

// unit maps a draw to [0, 1) with 53 bits.
func unit(h uint64) float64 { return float64(h>>11) * 0x1p-53 }

// mix is the finaliser of splitmix64: every bit of x moves every bit of
// the result.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// hashString is 64-bit FNV-1a.
func hashString(s string) uint64 {
	h := uint64(0xcbf29ce484222325)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}
