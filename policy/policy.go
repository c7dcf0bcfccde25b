package policy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/taxonomy"
)

// Error is a policy document, or an environment override, that cannot be
// used: where (the file, the line, the field) and why. It unwraps to a
// tool-definition-invalid error with code option_invalid, so
// taxonomy.InfoOf and errors.Is(err, taxonomy.ErrDefinitionInvalid) read
// it as every other invalid option.
type Error struct {
	File   string // the file's name as given to Load or New; "environment" for an override
	Line   int    // 1-based; 0 when unknown
	Field  string // the field's path, dotted: "tools.search_flights.retry.max_attempts"
	Reason string
}

// Error returns "file:line: field: reason", leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("policy: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// Unwrap returns the error as the taxonomy reads it: option_invalid.
func (e *Error) Unwrap() error {
	return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid, e.Error())
}

// Policy is the resolved policy of one tool: the defaults, with what the
// tool's own entry overrides. The zero value of a setting means the
// layer's own default.
type Policy struct {
	// Layers are the layers the policy puts around the tool, outermost
	// first, by name: approval, runlimit, retry, breaker, ratelimit,
	// bulkhead, timeout. The default is retry, breaker, timeout.
	Layers []string
	// Timeout is the per-attempt timeout (timeout layer); 0 means
	// middleware.DefaultTimeout.
	Timeout        time.Duration
	Retry          Retry
	Breaker        Breaker
	RateLimit      RateLimit
	Bulkhead       Bulkhead
	MaxCallsPerRun int // runlimit layer: calls of the tool in one run
}

// Retry is the retry layer's settings, and the tool's retry budget.
type Retry struct {
	MaxAttempts int           // retry.WithMaxAttempts
	Base, Cap   time.Duration // retry.WithBackoff
	MaxWait     time.Duration // retry.WithMaxWait
	// BudgetRatio and BudgetReserve make the tool's retry budget
	// (budget.WithRatio, budget.WithReserve).
	BudgetRatio   float64
	BudgetReserve int
}

// Breaker is the breaker layer's settings.
type Breaker struct {
	ConsecutiveFailures int           // breaker.WithConsecutiveFailures
	FailureRatio        float64       // breaker.WithFailureRatio, with MinRequests
	MinRequests         int           //
	Interval            time.Duration // breaker.WithInterval
	OpenFor             time.Duration // breaker.WithOpenFor
	Probes              int           // breaker.WithProbes
}

// RateLimit is the rate limit layer's settings.
type RateLimit struct {
	PerSecond float64       // the rate; required with the ratelimit layer
	Burst     int           // 0 means 1
	MaxWait   time.Duration // ratelimit.WithMaxWait
	Reject    bool          // ratelimit.WithReject
}

// Bulkhead is the bulkhead layer's settings.
type Bulkhead struct {
	MaxConcurrent int           // required with the bulkhead layer
	MaxQueue      int           // bulkhead.WithMaxQueue
	MaxWait       time.Duration // bulkhead.WithMaxWait
}

// The layers a policy may name.
const (
	LayerApproval  = middleware.Approval
	LayerRunLimit  = middleware.RunLimit
	LayerRetry     = middleware.Retry
	LayerBreaker   = middleware.Breaker
	LayerRateLimit = middleware.RateLimit
	LayerBulkhead  = middleware.Bulkhead
	LayerTimeout   = middleware.Timeout
)

var knownLayers = []string{LayerApproval, LayerRunLimit, LayerRetry, LayerBreaker, LayerRateLimit, LayerBulkhead, LayerTimeout}

// DefaultLayers are the layers of a policy that names none.
var DefaultLayers = []string{LayerRetry, LayerBreaker, LayerTimeout}

// The bounds of a document's values.
const (
	// MaxTools is how many tools one document may name.
	MaxTools = 10_000
	// MaxDuration is the longest duration a policy may set.
	MaxDuration = 24 * time.Hour
	// MaxCount bounds every count (attempts, failures, slots, bursts).
	MaxCount = 1 << 20
)

// maxField bounds the field an error names, in bytes.
const maxField = 256

// document is a parsed policy document.
type document struct {
	defaults Policy
	tools    map[string]Policy
}

// parser turns nodes into policies, naming the file in its errors (and
// the variable of an environment override).
type parser struct {
	file string
	env  map[*Node]string
}

func (p parser) fail(n *Node, field, format string, args ...any) error {
	if len(field) > maxField { // a key may be as long as the document
		field = strings.ToValidUTF8(field[:maxField], "") + "…"
	}
	if name, ok := p.env[n]; ok && n != nil {
		return &Error{File: "environment", Field: name, Reason: field + ": " + fmt.Sprintf(format, args...)}
	}
	line := 0
	if n != nil {
		line = max(n.Line, 0)
	}
	return &Error{File: p.file, Line: line, Field: field, Reason: fmt.Sprintf(format, args...)}
}

// parse reads a whole document.
func (p parser) parse(root *Node) (*document, error) {
	if root == nil || root.Kind != Object {
		return nil, p.fail(root, "", "the document must be an object with \"defaults\" and \"tools\"")
	}
	doc := &document{defaults: Policy{Layers: DefaultLayers}, tools: map[string]Policy{}}
	if err := p.fields(root, "", map[string]func(*Node, string) error{
		"version": func(n *Node, f string) error {
			if n.Kind != Number || n.Text != "1" {
				return p.fail(n, f, "the only version is 1")
			}
			return nil
		},
		"defaults": func(n *Node, f string) error { return p.policy(n, f, &doc.defaults) },
		"tools":    func(*Node, string) error { return nil }, // after the defaults, wherever they are
	}); err != nil {
		return nil, err
	}
	if err := p.check(root.get("defaults"), "defaults", doc.defaults); err != nil {
		return nil, err
	}
	tools := root.get("tools")
	if tools == nil {
		return doc, nil
	}
	if tools.Kind != Object {
		return nil, p.fail(tools, "tools", "must be an object of tool names, not %s", tools.Kind)
	}
	if len(tools.Keys) > MaxTools {
		return nil, p.fail(tools, "tools", "names %d tools; at most %d", len(tools.Keys), MaxTools)
	}
	for i, name := range tools.Keys {
		field := "tools." + name
		if !validToolName(name) {
			return nil, p.fail(tools.Values[i], field, "not a tool name (1 to 64 bytes of letters, digits, '_', '-' and '.')")
		}
		pol := doc.defaults
		pol.Layers = slices.Clone(pol.Layers)
		if err := p.policy(tools.Values[i], field, &pol); err != nil {
			return nil, err
		}
		if err := p.check(tools.Values[i], field, pol); err != nil {
			return nil, err
		}
		doc.tools[name] = pol
	}
	return doc, nil
}

// validToolName reports whether s could name a tool (toolmw.Spec's rule).
func validToolName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// fields applies each member of object n through the handler of its key;
// a key without one is an unknown field.
func (p parser) fields(n *Node, at string, handlers map[string]func(*Node, string) error) error {
	if n.Kind != Object {
		return p.fail(n, at, "must be an object, not %s", n.Kind)
	}
	for i, k := range n.Keys {
		f := join(at, k)
		h, ok := handlers[k]
		if !ok {
			known := make([]string, 0, len(handlers))
			for name := range handlers {
				known = append(known, name)
			}
			slices.Sort(known)
			return p.fail(n.Values[i], f, "unknown field (known here: %s)", strings.Join(known, ", "))
		}
		if err := h(n.Values[i], f); err != nil {
			return err
		}
	}
	return nil
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// policy applies the object n onto pol.
func (p parser) policy(n *Node, at string, pol *Policy) error {
	return p.fields(n, at, map[string]func(*Node, string) error{
		"layers":            func(n *Node, f string) error { return p.layers(n, f, &pol.Layers) },
		"timeout":           func(n *Node, f string) error { return p.duration(n, f, &pol.Timeout) },
		"max_calls_per_run": func(n *Node, f string) error { return p.count(n, f, 1, &pol.MaxCallsPerRun) },
		"retry": func(n *Node, f string) error {
			r := &pol.Retry
			return p.fields(n, f, map[string]func(*Node, string) error{
				"max_attempts": func(n *Node, f string) error { return p.count(n, f, 1, &r.MaxAttempts) },
				"base_delay":   func(n *Node, f string) error { return p.duration(n, f, &r.Base) },
				"max_delay":    func(n *Node, f string) error { return p.duration(n, f, &r.Cap) },
				"max_wait":     func(n *Node, f string) error { return p.duration(n, f, &r.MaxWait) },
				"budget_ratio": func(n *Node, f string) error { return p.ratio(n, f, &r.BudgetRatio) },
				"budget_reserve": func(n *Node, f string) error {
					return p.count(n, f, 0, &r.BudgetReserve)
				},
			})
		},
		"breaker": func(n *Node, f string) error {
			b := &pol.Breaker
			return p.fields(n, f, map[string]func(*Node, string) error{
				"consecutive_failures": func(n *Node, f string) error { return p.count(n, f, 1, &b.ConsecutiveFailures) },
				"failure_ratio":        func(n *Node, f string) error { return p.ratio(n, f, &b.FailureRatio) },
				"min_requests":         func(n *Node, f string) error { return p.count(n, f, 1, &b.MinRequests) },
				"interval":             func(n *Node, f string) error { return p.duration(n, f, &b.Interval) },
				"open_for":             func(n *Node, f string) error { return p.duration(n, f, &b.OpenFor) },
				"probes":               func(n *Node, f string) error { return p.count(n, f, 1, &b.Probes) },
			})
		},
		"rate_limit": func(n *Node, f string) error {
			r := &pol.RateLimit
			return p.fields(n, f, map[string]func(*Node, string) error{
				"per_second": func(n *Node, f string) error { return p.rate(n, f, &r.PerSecond) },
				"burst":      func(n *Node, f string) error { return p.count(n, f, 1, &r.Burst) },
				"max_wait":   func(n *Node, f string) error { return p.duration(n, f, &r.MaxWait) },
				"reject":     func(n *Node, f string) error { return p.boolean(n, f, &r.Reject) },
			})
		},
		"bulkhead": func(n *Node, f string) error {
			b := &pol.Bulkhead
			return p.fields(n, f, map[string]func(*Node, string) error{
				"max_concurrent": func(n *Node, f string) error { return p.count(n, f, 1, &b.MaxConcurrent) },
				"max_queue":      func(n *Node, f string) error { return p.count(n, f, 0, &b.MaxQueue) },
				"max_wait":       func(n *Node, f string) error { return p.duration(n, f, &b.MaxWait) },
			})
		},
	})
}

// check reports a policy whose settings and layers disagree; n is where
// the policy was given (nil: nowhere, the built-in defaults).
func (p parser) check(n *Node, at string, pol Policy) error {
	has := func(l string) bool { return slices.Contains(pol.Layers, l) }
	where := func(key string) *Node {
		if n == nil {
			return nil
		}
		if v := n.get(key); v != nil {
			return v
		}
		return n
	}
	switch {
	case has(LayerRateLimit) && pol.RateLimit.PerSecond == 0:
		return p.fail(where("layers"), join(at, "rate_limit.per_second"), "the ratelimit layer needs a rate")
	case has(LayerBulkhead) && pol.Bulkhead.MaxConcurrent == 0:
		return p.fail(where("layers"), join(at, "bulkhead.max_concurrent"), "the bulkhead layer needs a number of slots")
	case has(LayerRunLimit) && pol.MaxCallsPerRun == 0:
		return p.fail(where("layers"), join(at, "max_calls_per_run"), "the runlimit layer needs a number of calls")
	case !has(LayerRateLimit) && pol.RateLimit != RateLimit{} && n != nil && n.get("rate_limit") != nil:
		return p.fail(where("rate_limit"), join(at, "rate_limit"), "set, but the layers do not include ratelimit")
	case !has(LayerBulkhead) && pol.Bulkhead != Bulkhead{} && n != nil && n.get("bulkhead") != nil:
		return p.fail(where("bulkhead"), join(at, "bulkhead"), "set, but the layers do not include bulkhead")
	case !has(LayerRunLimit) && pol.MaxCallsPerRun != 0 && n != nil && n.get("max_calls_per_run") != nil:
		return p.fail(where("max_calls_per_run"), join(at, "max_calls_per_run"), "set, but the layers do not include runlimit")
	case pol.Retry.Cap != 0 && pol.Retry.Cap < pol.Retry.Base:
		return p.fail(where("retry"), join(at, "retry.max_delay"), "below retry.base_delay (%v)", pol.Retry.Base)
	}
	// What the layers themselves refuse, found now rather than at a call.
	if err := breaker.Validate(breakerOptions(pol.Breaker)...); err != nil {
		return p.fail(where("breaker"), join(at, "breaker"), "%s", taxonomy.InfoOf(err).Message)
	}
	if err := retry.Validate(retryOptions(pol.Retry)...); err != nil {
		return p.fail(where("retry"), join(at, "retry"), "%s", taxonomy.InfoOf(err).Message)
	}
	return nil
}

func (p parser) layers(n *Node, f string, out *[]string) error {
	if n.Kind != Array {
		return p.fail(n, f, "must be a list of layer names, not %s", n.Kind)
	}
	var ls []string
	for i, it := range n.Items {
		fi := f + "[" + strconv.Itoa(i) + "]"
		if it.Kind != String {
			return p.fail(it, fi, "must be a layer name, not %s", it.Kind)
		}
		if !slices.Contains(knownLayers, it.Text) {
			return p.fail(it, fi, "unknown layer %q (known: %s)", cut(it.Text), strings.Join(knownLayers, ", "))
		}
		if slices.Contains(ls, it.Text) {
			return p.fail(it, fi, "the layer %q is named twice", it.Text)
		}
		ls = append(ls, it.Text)
	}
	*out = ls
	return nil
}

// cut bounds what an error repeats of the document.
func cut(s string) string {
	if len(s) > 64 {
		return strings.ToValidUTF8(s[:64], "") + "…"
	}
	return s
}

// scalar returns n's text when n is a scalar of kind want, or given as
// text by an environment override.
func (p parser) scalar(n *Node, f string, want NodeKind) (string, error) {
	if n.Kind == want || n.Kind == String && n.Line == envLine {
		return n.Text, nil
	}
	return "", p.fail(n, f, "must be %s, not %s", want, n.Kind)
}

func (p parser) duration(n *Node, f string, out *time.Duration) error {
	s, err := p.scalar(n, f, String)
	if err != nil {
		return p.fail(n, f, "must be a duration such as \"500ms\" or \"30s\", not %s", n.Kind)
	}
	d, perr := time.ParseDuration(s)
	switch {
	case perr != nil:
		return p.fail(n, f, "%q is not a duration (such as \"500ms\" or \"30s\")", cut(s))
	case d < 0:
		return p.fail(n, f, "%q is negative", cut(s))
	case d > MaxDuration:
		return p.fail(n, f, "%q is above %v", cut(s), MaxDuration)
	}
	*out = d
	return nil
}

func (p parser) number(n *Node, f string) (float64, error) {
	s, err := p.scalar(n, f, Number)
	if err != nil {
		return 0, err
	}
	v, perr := strconv.ParseFloat(s, 64)
	if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, p.fail(n, f, "%q is not a number", cut(s))
	}
	return v, nil
}

func (p parser) count(n *Node, f string, least int, out *int) error {
	v, err := p.number(n, f)
	if err != nil {
		return err
	}
	switch {
	case v != math.Trunc(v):
		return p.fail(n, f, "%v is not a whole number", v)
	case v < float64(least):
		return p.fail(n, f, "%v is below %d", v, least)
	case v > MaxCount:
		return p.fail(n, f, "%v is above %d", v, MaxCount)
	}
	*out = int(v)
	return nil
}

func (p parser) ratio(n *Node, f string, out *float64) error {
	v, err := p.number(n, f)
	if err != nil {
		return err
	}
	if v <= 0 || v > 1 {
		return p.fail(n, f, "%v is not in (0, 1]", v)
	}
	*out = v
	return nil
}

func (p parser) rate(n *Node, f string, out *float64) error {
	v, err := p.number(n, f)
	if err != nil {
		return err
	}
	if v <= 0 || v > MaxCount {
		return p.fail(n, f, "%v is not in (0, %d]", v, MaxCount)
	}
	*out = v
	return nil
}

func (p parser) boolean(n *Node, f string, out *bool) error {
	s, err := p.scalar(n, f, Bool)
	if err != nil {
		return err
	}
	switch strings.ToLower(s) {
	case "true":
		*out = true
	case "false":
		*out = false
	default:
		return p.fail(n, f, "%q is not true or false", cut(s))
	}
	return nil
}
