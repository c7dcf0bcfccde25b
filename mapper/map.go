package mapper

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"sync"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/internal/errchain"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// Map translates foreign errors into the taxonomy by its rules. A Map is
// immutable and safe for concurrent use: [Map.With] and [Map.WithOptions]
// return new maps and leave the receiver as it was. Make one with [New] or
// [Default]; the zero Map is not usable.
type Map struct {
	rules []Rule // as given, oldest first
	cfg   config

	// The compiled rules by level, newest first.
	types, ifaces, http, grpc []compiled
	unmapped                  [2]*taxonomy.ToolError // for a tool that is not idempotent, and one that is
	upstreamTimeout           [2]*taxonomy.ToolError // a dependency's deadline no rule claimed, likewise
	deadline                  [1]*taxonomy.ToolError // the caller's deadline: never retried
}

// compiled is a rule with the errors its fixed verdict makes, built once.
type compiled struct {
	Rule
	made [2]*taxonomy.ToolError // for a tool that is not idempotent, and one that is
}

// Option configures a Map.
type Option func(*config)

type config struct {
	clock    clock.Clock
	scrubber *scrub.Scrubber
	messages bool
}

// WithClock sets the clock that an HTTP-date Retry-After is read against,
// for example a *clock.Fake in tests. The default, and a nil c, is
// clock.System.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = clock.Or(c) }
}

// WithScrubber sets the scrubber every message the map makes passes
// through. The default, and a nil s, is scrub.Default().
func WithScrubber(s *scrub.Scrubber) Option {
	return func(c *config) {
		if s == nil {
			s = scrub.Default()
		}
		c.scrubber = s
	}
}

// WithMessages makes the map include the foreign error's text, scrubbed, in
// the message of the typed error: "rule message: scrubbed text", or the
// scrubbed text alone when the rule gives no message. By default the foreign
// text is left out entirely: a scrubber finds the secrets it knows, and
// text that is not there cannot leak. The text of Error() of the error
// passed to Classify is used.
func WithMessages() Option {
	return func(c *config) { c.messages = true }
}

// New returns a map without rules, configured by opts: every error it
// classifies is unmapped. Add rules with [Map.With]. Every option value is
// usable: nil options are skipped, and a nil clock or scrubber means the
// default.
func New(opts ...Option) *Map {
	cfg := config{clock: clock.System, scrubber: scrub.Default()}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return build(nil, cfg)
}

var defaultMap = sync.OnceValue(func() *Map { return New().With(DefaultRules()...) })

// Default returns the shared map of [DefaultRules] with the default options.
// Extend it with [Map.With]; the shared map itself never changes.
func Default() *Map { return defaultMap() }

// With returns a new map with m's rules and options followed by rules.
// Later rules take precedence over earlier ones of the same level, so
// Default().With(r) lets r override a default rule of its level; a rule of
// a higher level (a type rule over a status rule) still ranks first,
// whoever added it. Zero Rules are ignored.
func (m *Map) With(rules ...Rule) *Map {
	return build(slices.Concat(m.rules, rules), m.cfg)
}

// WithOptions returns a new map with m's rules and options followed by opts.
func (m *Map) WithOptions(opts ...Option) *Map {
	cfg := m.cfg
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return build(m.rules, cfg)
}

func build(rules []Rule, cfg config) *Map {
	m := &Map{rules: rules, cfg: cfg}
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		var dst *[]compiled
		switch r.level {
		case levelType:
			dst = &m.types
		case levelInterface:
			dst = &m.ifaces
		case levelStatus:
			dst = &m.http
		case levelGRPC:
			dst = &m.grpc
		default:
			continue
		}
		c := compiled{Rule: r}
		if r.decide == nil {
			c.made = [2]*taxonomy.ToolError{m.make(r.out, false), m.make(r.out, true)}
		}
		*dst = append(*dst, c)
	}
	m.unmapped = [2]*taxonomy.ToolError{
		taxonomy.Failure(taxonomy.CodeUnmappedFailure, ""),
		taxonomy.Failure(taxonomy.CodeUnmappedFailure, "").WithRetryable(true),
	}
	m.upstreamTimeout = [2]*taxonomy.ToolError{m.make(upstreamTimeout, false), m.make(upstreamTimeout, true)}
	m.deadline = [1]*taxonomy.ToolError{m.make(callerDeadline, false)}
	return m
}

// make returns the error o makes, without cause or tool.
func (m *Map) make(o Verdict, idempotent bool) *taxonomy.ToolError {
	te := taxonomy.New(o.kind, o.code, m.cfg.scrubber.String(o.message))
	r := o.retryable(idempotent)
	if te.Retryable() != r {
		te = te.WithRetryable(r)
	}
	if r && o.retryAfter > 0 {
		te = te.WithRetryAfter(o.retryAfter)
	}
	return te
}

// Classify translates err, returned by the named tool, into the taxonomy,
// for a tool that is not known to be idempotent. It is
// ClassifyFor(tool, false, err).
func (m *Map) Classify(tool string, err error) error {
	return m.ClassifyFor(tool, false, err)
}

// ClassifyFor translates err, returned by the named tool, into the taxonomy.
// idempotent says whether the tool may be called again safely; it decides
// the verdicts that are transient only for an idempotent tool.
//
// nil stays nil. A cancellation (errors.Is(err, context.Canceled)) and an
// error with a typed error anywhere in its chain are returned as they are.
// Any other error comes back as a *taxonomy.ToolError wrapping err, made by
// the first matching rule in the order the package documentation gives, or
// an unmapped_failure: permanent, or retryable when the tool is idempotent
// (the retry rule for an error nobody classified). Its message never holds err's text unless
// the map was made [WithMessages], and then only scrubbed.
//
// Without the call's context the map cannot tell whose deadline passed: a
// deadline error that no rule claims (a bare context.DeadlineExceeded) is
// taken as the caller's. [Map.ClassifyContext] knows better.
func (m *Map) ClassifyFor(tool string, idempotent bool, err error) error {
	return m.classify(tool, idempotent, err, callerUnknown)
}

// ClassifyContext is [Map.ClassifyFor] for a call whose context is ctx, so
// the map knows whose time ran out:
//
//   - when ctx's deadline has passed, a timeout of any sort (an error that
//     is context.DeadlineExceeded or os.ErrDeadlineExceeded, a net.Error
//     whose Timeout() is true, a gRPC DeadlineExceeded status) is the
//     caller's: tool-timeout/deadline_exceeded, never retried, whatever the
//     rules say;
//   - when it has not, a deadline error is a dependency's (Go's http.Client
//     and Transport timeouts report themselves as context.DeadlineExceeded,
//     and so does a context the tool made for its own upstream call): the
//     rules classify it, and one that no rule claims is
//     tool-timeout/upstream_timeout, retried for an idempotent tool.
//
// The classify layer calls it with the context the tool ran in.
func (m *Map) ClassifyContext(ctx context.Context, tool string, idempotent bool, err error) error {
	whose := callerRunning
	if ctx.Err() == context.DeadlineExceeded {
		whose = callerPassed
	}
	return m.classify(tool, idempotent, err, whose)
}

// caller is what the map knows of the caller's deadline.
type caller uint8

const (
	callerUnknown caller = iota // no context: Classify, ClassifyFor
	callerRunning               // the call's context is not past its deadline
	callerPassed                // the call's deadline has passed
)

func (m *Map) classify(tool string, idempotent bool, err error, whose caller) error {
	if err == nil {
		return nil
	}
	if _, ok := taxonomy.From(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	if whose == callerPassed && isTimeout(err) {
		return m.finish(m.deadline[0], tool, err)
	}
	found, ok := walk(err, m.typeAt)
	if !ok {
		found, ok = walk(err, m.statusAt)
	}
	var te *taxonomy.ToolError
	switch {
	case ok && found.rule != nil:
		te = found.rule.made[b2i(idempotent)]
	case ok:
		te = m.make(found.out, idempotent)
	case whose == callerRunning && errors.Is(err, context.DeadlineExceeded):
		te = m.upstreamTimeout[b2i(idempotent)]
	case errors.Is(err, context.DeadlineExceeded):
		te = m.deadline[0]
	default:
		te = m.unmapped[b2i(idempotent)]
	}
	return m.finish(te, tool, err)
}

// isTimeout reports whether err says that time ran out, anywhere in its
// chain: a deadline sentinel, a net.Error timeout or a gRPC
// DeadlineExceeded status.
func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	_, ok := walk(err, func(link error) (struct{}, bool) {
		if ne, ok := link.(net.Error); ok && ne.Timeout() {
			return struct{}{}, true
		}
		code, ok := grpcCode(link)
		return struct{}{}, ok && code == uint64(grpcDeadlineExceeded)
	})
	return ok
}

// finish returns te naming tool, wrapping err, with err's text when the map
// says so and err's Retry-After when te is retryable.
func (m *Map) finish(te *taxonomy.ToolError, tool string, err error) *taxonomy.ToolError {
	if m.cfg.messages {
		msg := m.cfg.scrubber.String(err.Error())
		if te.Message() != "" {
			msg = te.Message() + ": " + msg
		}
		te = te.WithMessage(msg)
	}
	te = te.WithCause(err)
	if tool != "" {
		te = te.WithTool(tool)
	}
	if te.Retryable() {
		if d, ok := walk(err, m.retryAfterAt); ok && d != te.RetryAfter() {
			te = te.WithRetryAfter(d)
		}
	}
	return te
}

// found is what a rule said about a link: a compiled rule with a fixed
// verdict, or a verdict computed by a rule.
type found struct {
	rule *compiled
	out  Verdict
}

// typeAt matches one link against the sentinel and type rules, then the
// interface rules.
func (m *Map) typeAt(err error) (found, bool) {
	l := newLink(err)
	if f, ok := matchLink(m.types, l); ok {
		return f, true
	}
	return matchLink(m.ifaces, l)
}

func matchLink(rules []compiled, l link) (found, bool) {
	for i := range rules {
		r := &rules[i]
		if r.target != nil {
			if r.is(l) {
				return found{rule: r}, true
			}
			continue
		}
		if r.match != nil {
			if r.match(l) {
				return found{rule: r}, true
			}
			continue
		}
		if o, ok := r.decide(l); ok {
			return found{out: o}, true
		}
	}
	return found{}, false
}

// statusAt matches the HTTP status and the gRPC code that link carries, if
// any, against the status rules.
func (m *Map) statusAt(link error) (found, bool) {
	if len(m.http) > 0 {
		if code, ok := httpStatus(link); ok {
			if f, ok := matchCode(m.http, code); ok {
				return f, true
			}
		}
	}
	if len(m.grpc) > 0 {
		if code, ok := grpcCode(link); ok {
			return matchCode(m.grpc, code)
		}
	}
	return found{}, false
}

func matchCode(rules []compiled, code uint64) (found, bool) {
	for i := range rules {
		if r := &rules[i]; r.lo <= code && code <= r.hi {
			return found{rule: r}, true
		}
	}
	return found{}, false
}

// walk visits err's chain depth first, outermost first, as errors.Is does,
// and returns the first result visit reports.
func walk[R any](err error, visit func(error) (R, bool)) (R, bool) {
	return errchain.Find(err, visit)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
