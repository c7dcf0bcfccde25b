package policy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/bulkhead"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/timeout"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures [Load] and [New].
type Option func(*config)

type config struct {
	decoder Decoder
	env     string // the prefix of environment overrides; "" for none
	desk    *approval.Desk
	clock   clock.Clock
	err     error
}

// WithDecoder sets how the document is read; the default is [JSON] (for
// YAML, adapters/policyyaml's Decode). nil keeps the default.
func WithDecoder(d Decoder) Option {
	return func(c *config) {
		if d != nil {
			c.decoder = d
		}
	}
}

// WithEnv reads overrides from environment variables named prefix, "__",
// and the path of a field in capitals, its parts joined by "__", read at
// every load and reload:
//
//	TOOLMW_POLICY__DEFAULTS__TIMEOUT=5s
//	TOOLMW_POLICY__TOOLS__SEARCH_FLIGHTS__RETRY__MAX_ATTEMPTS=2
//	TOOLMW_POLICY__DEFAULTS__LAYERS=retry,breaker,timeout
//
// Parts are matched without regard to case, '-' and '.' read as '_'; a
// tool must be named in the document, and a part that matches no field or
// more than one tool is an [*Error] naming the variable. An override wins
// over the document. The prefix must be a valid variable name.
func WithEnv(prefix string) Option {
	return func(c *config) {
		if !envName(prefix) {
			c.reject("WithEnv(%q): not a variable name", prefix)
			return
		}
		c.env = prefix
	}
}

// WithDesk sets the approval desk that the approval layer of a policy
// asks. A policy naming the approval layer without one is refused.
func WithDesk(d *approval.Desk) Option {
	return func(c *config) { c.desk = d }
}

// WithClock sets the clock of the layers the policies make (retry,
// breaker, rate limit, bulkhead, timeout); nil means clock.System.
func WithClock(clk clock.Clock) Option {
	return func(c *config) {
		if clk != nil {
			c.clock = clk
		}
	}
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, fmt.Sprintf("policy: "+format, args...))
	}
}

// Set is the policies of a document, applied to the tools its
// [Set.Middleware] wraps, and swapped whole by a reload. A Set is safe for
// concurrent use.
type Set struct {
	cfg  config
	path string // "" when made by New
	name string

	cur    atomic.Pointer[generation]
	reload sync.Mutex // one reload at a time

	mu   sync.Mutex // guards kept
	kept map[string]*instances
}

// generation is one accepted document.
type generation struct {
	doc  *document
	hash [sha256.Size]byte
}

// instances are what a tool's layers keep across reloads: kept as long as
// their own settings do not change.
type instances struct {
	breakerSet Breaker
	breaker    *breaker.Breaker
	limiter    *rate.Limiter
	poolSet    Bulkhead
	pool       *bulkhead.Pool
	budgetSet  [2]float64
	budget     *budget.Retry
	runLimit   int
	runLayer   toolmw.Middleware
}

// Load reads the policy document at path and returns its Set. Reload
// reads it again. The file is at most [MaxFileSize] bytes.
func Load(path string, opts ...Option) (*Set, error) {
	s := newSet(opts)
	if s.cfg.err != nil {
		return nil, s.cfg.err
	}
	s.path, s.name = path, path
	if err := s.Reload(); err != nil {
		return nil, err
	}
	return s, nil
}

// New returns the Set of the document data; name names it in errors.
// Update replaces it.
func New(name string, data []byte, opts ...Option) (*Set, error) {
	s := newSet(opts)
	if s.cfg.err != nil {
		return nil, s.cfg.err
	}
	s.name = name
	if err := s.Update(data); err != nil {
		return nil, err
	}
	return s, nil
}

func newSet(opts []Option) *Set {
	s := &Set{cfg: config{decoder: JSON, clock: clock.System}, kept: map[string]*instances{}}
	for _, o := range opts {
		if o != nil {
			o(&s.cfg)
		}
	}
	return s
}

// Reload reads the file again and, when it is valid, swaps the policies
// for the calls that start after it; calls under way finish under the
// policies they started with. An invalid file (or override) changes
// nothing and is returned as an [*Error]. A Set made by New has no file:
// Reload returns an error.
func (s *Set) Reload() error {
	if s.path == "" {
		return errors.New("policy: the Set was made by New and has no file; use Update")
	}
	f, err := os.Open(s.path)
	if err != nil {
		return &Error{File: s.name, Reason: "cannot be read: " + err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return &Error{File: s.name, Reason: "cannot be read: " + err.Error()}
	}
	return s.Update(data)
}

// Update makes data the document, as Reload does with the file's bytes.
func (s *Set) Update(data []byte) error {
	s.reload.Lock()
	defer s.reload.Unlock()
	if len(data) > MaxFileSize {
		return &Error{File: s.name, Reason: fmt.Sprintf("larger than %d bytes", MaxFileSize)}
	}
	doc, err := s.parse(data)
	if err != nil {
		return err
	}
	s.cur.Store(&generation{doc: doc, hash: sha256.Sum256(data)})
	return nil
}

func (s *Set) parse(data []byte) (*document, error) {
	p := parser{file: s.name}
	root, err := s.cfg.decoder(data)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) {
			pe.File = s.name
			return nil, pe
		}
		return nil, &Error{File: s.name, Reason: err.Error()}
	}
	if err := CheckBounds(root); err != nil {
		err.(*Error).File = s.name
		return nil, err
	}
	if s.cfg.env != "" {
		if root, err = applyEnv(root, s.cfg.env, os.Environ(), &p); err != nil {
			return nil, err
		}
	}
	doc, err := p.parse(root)
	if err != nil {
		return nil, err
	}
	for name, pol := range doc.tools {
		if slices.Contains(pol.Layers, LayerApproval) && s.cfg.desk == nil {
			return nil, &Error{File: s.name, Field: "tools." + name + ".layers", Reason: "the approval layer needs a Desk (policy.WithDesk)"}
		}
	}
	if slices.Contains(doc.defaults.Layers, LayerApproval) && s.cfg.desk == nil {
		return nil, &Error{File: s.name, Field: "defaults.layers", Reason: "the approval layer needs a Desk (policy.WithDesk)"}
	}
	return doc, nil
}

// Policy returns the policy a tool named name is given now: its entry in
// the document, or the defaults.
func (s *Set) Policy(name string) Policy {
	doc := s.cur.Load().doc
	if pol, ok := doc.tools[name]; ok {
		return pol
	}
	return doc.defaults
}

// Watch reloads the file whenever its content changes, looking every
// interval (at least 100 ms), until ctx ends. onError, if not nil, is
// given each failed reload (the running policies stay); it must not
// block. A Set made by New has no file: Watch returns at once.
func (s *Set) Watch(ctx context.Context, every time.Duration, onError func(error)) {
	if s.path == "" {
		return
	}
	every = max(every, 100*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	var failed [sha256.Size]byte
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		data, err := os.ReadFile(filepath.Clean(s.path))
		if err != nil {
			if onError != nil {
				onError(&Error{File: s.name, Reason: "cannot be read: " + err.Error()})
			}
			continue
		}
		h := sha256.Sum256(data)
		if h == s.cur.Load().hash || h == failed {
			continue
		}
		if err := s.Update(data); err != nil {
			failed = h
			if onError != nil {
				onError(err)
			}
		}
	}
}

// Middleware returns the layer that applies the Set's policies: each call
// goes through the layers its tool's policy names, as the Set holds them
// when the call starts. The layers of a tool are made on its first call
// after a reload; what they keep (a breaker's state and counts, a rate
// limiter's tokens, a bulkhead's slots and queue, a retry budget, per-run
// call counts) is kept across reloads as long as that layer's own settings
// do not change; a layer whose settings changed starts afresh.
func (s *Set) Middleware() toolmw.Middleware {
	return func(next toolmw.Tool) toolmw.Tool {
		w := &wrapped{set: s, next: next}
		return w.call
	}
}

// Stack returns base with the Set's layer in place of base's retry,
// breaker, rate limit and timeout layers (where retry was): the policy
// decides those, and base keeps the rest (tracing, logging, events,
// recovery, redact, classify). base must have a retry layer.
func (s *Set) Stack(base middleware.Stack) (middleware.Stack, error) {
	st, err := base.InsertBefore(middleware.Retry, middleware.Layer{Name: middleware.Policy, Middleware: s.Middleware()})
	if err != nil {
		return base, err
	}
	for _, name := range []string{middleware.Retry, middleware.Breaker, middleware.RateLimit, middleware.Timeout} {
		if next, err := st.Remove(name); err == nil {
			st = next
		}
	}
	return st, nil
}

// wrapped is one tool under the Set.
type wrapped struct {
	set   *Set
	next  toolmw.Tool
	built atomic.Pointer[built]
	mu    sync.Mutex // one build at a time
}

// built is a tool's layers for one generation.
type built struct {
	gen  *generation
	tool toolmw.Tool
}

func (w *wrapped) call(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	g := w.set.cur.Load()
	b := w.built.Load()
	if b == nil || b.gen != g {
		// A tool toolmw.Wrap made has one name: it is read from the call
		// only when the layers are made, once per reload.
		var name string
		if c, ok := toolmw.CallFrom(ctx); ok {
			name = c.Tool
		}
		b = w.build(g, name)
	}
	return b.tool(ctx, args)
}

func (w *wrapped) build(g *generation, name string) *built {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b := w.built.Load(); b != nil && b.gen == g {
		return b
	}
	pol, ok := g.doc.tools[name]
	if !ok {
		pol = g.doc.defaults
	}
	mws := w.set.layers(name, pol)
	tool := w.next
	for i := len(mws) - 1; i >= 0; i-- {
		tool = mws[i](tool)
	}
	b := &built{gen: g, tool: tool}
	w.built.Store(b)
	return b
}

// layers makes the middlewares of pol for the tool named, outermost
// first, with what the tool keeps across reloads.
func (s *Set) layers(name string, pol Policy) []toolmw.Middleware {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.kept[name]
	if k == nil {
		k = &instances{}
		s.kept[name] = k
	}
	clk := s.cfg.clock
	var mws []toolmw.Middleware
	for _, l := range pol.Layers {
		switch l {
		case LayerApproval:
			mws = append(mws, s.cfg.desk.Middleware(approval.Tools(name)))
		case LayerRunLimit:
			if k.runLayer == nil || k.runLimit != pol.MaxCallsPerRun {
				k.runLimit, k.runLayer = pol.MaxCallsPerRun, runlimit.New(runlimit.Max(name, pol.MaxCallsPerRun))
			}
			mws = append(mws, k.runLayer)
		case LayerRetry:
			set := [2]float64{pol.Retry.BudgetRatio, float64(pol.Retry.BudgetReserve)}
			if k.budget == nil || k.budgetSet != set {
				var bo []budget.RetryOption
				if pol.Retry.BudgetRatio > 0 {
					bo = append(bo, budget.WithRatio(pol.Retry.BudgetRatio))
				}
				if pol.Retry.BudgetReserve > 0 {
					bo = append(bo, budget.WithReserve(pol.Retry.BudgetReserve))
				}
				k.budgetSet, k.budget = set, budget.NewRetry(bo...)
			}
			mws = append(mws, retry.New(append(retryOptions(pol.Retry), retry.WithBudget(k.budget), retry.WithClock(clk))...))
		case LayerBreaker:
			if k.breaker == nil || k.breakerSet != pol.Breaker {
				k.breakerSet = pol.Breaker
				k.breaker = breaker.NewBreaker(name, append(breakerOptions(pol.Breaker), breaker.WithClock(clk))...)
			}
			mws = append(mws, breaker.New(breaker.WithShared(k.breaker)))
		case LayerRateLimit:
			limit, burst := rate.Limit(pol.RateLimit.PerSecond), max(pol.RateLimit.Burst, 1)
			if k.limiter == nil {
				k.limiter = rate.NewLimiter(limit, burst)
			} else if k.limiter.Limit() != limit || k.limiter.Burst() != burst {
				now := clk.Now()
				k.limiter.SetLimitAt(now, limit)
				k.limiter.SetBurstAt(now, burst)
			}
			opts := []ratelimit.Option{ratelimit.WithShared(k.limiter), ratelimit.WithClock(clk)}
			if pol.RateLimit.MaxWait > 0 {
				opts = append(opts, ratelimit.WithMaxWait(pol.RateLimit.MaxWait))
			}
			if pol.RateLimit.Reject {
				opts = append(opts, ratelimit.WithReject())
			}
			mws = append(mws, ratelimit.New(limit, burst, opts...))
		case LayerBulkhead:
			if k.pool == nil || k.poolSet != pol.Bulkhead {
				k.poolSet = pol.Bulkhead
				var po []bulkhead.Option
				if pol.Bulkhead.MaxQueue > 0 {
					po = append(po, bulkhead.WithMaxQueue(pol.Bulkhead.MaxQueue))
				}
				k.pool = bulkhead.NewPool(pol.Bulkhead.MaxConcurrent, po...)
			}
			bo := []bulkhead.Option{bulkhead.WithShared(k.pool)}
			if pol.Bulkhead.MaxWait > 0 {
				bo = append(bo, bulkhead.WithMaxWait(pol.Bulkhead.MaxWait))
			}
			mws = append(mws, bulkhead.New(pol.Bulkhead.MaxConcurrent, bo...))
		case LayerTimeout:
			d := pol.Timeout
			if d == 0 {
				d = middleware.DefaultTimeout
			}
			mws = append(mws, timeout.New(d, timeout.WithClock(clk)))
		}
	}
	return mws
}

func retryOptions(r Retry) []retry.Option {
	var o []retry.Option
	if r.MaxAttempts > 0 {
		o = append(o, retry.WithMaxAttempts(r.MaxAttempts))
	}
	if r.Base != 0 || r.Cap != 0 {
		base, cap := r.Base, r.Cap
		if base == 0 {
			base = retry.DefaultBaseDelay
		}
		if cap == 0 {
			cap = max(retry.DefaultMaxDelay, base)
		}
		o = append(o, retry.WithBackoff(base, cap))
	}
	if r.MaxWait > 0 {
		o = append(o, retry.WithMaxWait(r.MaxWait))
	}
	return o
}

func breakerOptions(b Breaker) []breaker.Option {
	var o []breaker.Option
	if b.FailureRatio > 0 {
		o = append(o, breaker.WithFailureRatio(b.FailureRatio, b.MinRequests))
	} else if b.ConsecutiveFailures > 0 {
		o = append(o, breaker.WithConsecutiveFailures(b.ConsecutiveFailures))
	}
	if b.Interval > 0 {
		o = append(o, breaker.WithInterval(b.Interval))
	}
	if b.OpenFor > 0 {
		o = append(o, breaker.WithOpenFor(b.OpenFor))
	}
	if b.Probes > 0 {
		o = append(o, breaker.WithProbes(b.Probes))
	}
	return o
}
