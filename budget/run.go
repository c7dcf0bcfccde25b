package budget

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/store"
)

// DefaultRunAttempts is how many attempts one tool may use across a whole
// run when no other cap is given. It counts attempts per run, not per call:
// the retry layer's own cap per call is retry.DefaultMaxAttempts.
const DefaultRunAttempts = 12

// Run caps how many attempts each tool may use across one agent run. Tools
// are told apart by name; calls made without a name (outside toolmw.Wrap)
// share the name "". A Run is safe for concurrent use: the cap holds exactly
// however many calls of a tool run at once.
//
// The zero Run is ready to use: every tool may take [DefaultRunAttempts].
// [NewRun] makes one with other caps. A Run must not be copied after first
// use.
type Run struct {
	id     string         // the loop's name for the run; "" when it gave none
	max    int            // the cap of every tool without its own; 0 means DefaultRunAttempts
	limits map[string]int // per-tool caps; read-only after NewRun

	store RunStore // nil, or unused without an id: counts are in-process only
	guard *storeguard.Guard

	mu   sync.Mutex
	used map[string]int // made on the first Take
}

// RunOption configures a [Run].
type RunOption func(*runConfig)

type runConfig struct {
	id       string
	max      int
	limits   map[string]int
	store    RunStore
	storeCfg store.Config
	err      error
}

func (c *runConfig) reject(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("budget: "+format, args...)
	}
}

// MaxRunIDLen bounds a run id as the stores see it, in bytes: a longer id
// given to [WithID] is hashed.
const MaxRunIDLen = 128

// hashedIDPrefix starts the id of a run named by an id that is not of the
// plain shape (see WithID).
const hashedIDPrefix = "tmr_"

// WithID names the run, for a loop whose runs outlive a process or are
// served by several replicas: layers that keep state beyond one process
// (an approval store, a budget, call limit or spend shared on Redis) and
// the idempotency keys of the run's calls are keyed by it, so the same id
// reaches the same state after a restart or on another replica. Two runs
// given the same id share that state: make ids unique (a UUID, say).
//
// Any string may name a run. An id of the plain shape — at most
// [MaxRunIDLen] bytes of ASCII letters, digits and "_-.:" — is the run's id
// as given ([Run.ID]). Any other id ("tenant/42/run-7", one with spaces,
// non-ASCII letters or over MaxRunIDLen bytes) is hashed into one of the
// plain shape: "tmr_" and the first 32 hex digits of the SHA-256 of
// "toolmw hashed run id", a zero byte and the id. The hash is the same in
// every process, so the run's state is still shared and found again, and
// distinct ids get distinct ids. An id given in exactly that hashed form
// ("tmr_" and 32 lower-case hex digits) is hashed too, so no id can pose as
// the hash of another. "" means no id (the default).
func WithID(id string) RunOption {
	return func(c *runConfig) { c.id = runID(id) }
}

// runID returns the id a run named id has (see WithID).
func runID(id string) string {
	if id == "" || validID(id) && !hashedForm(id) {
		return id
	}
	sum := sha256.Sum256([]byte("toolmw hashed run id\x00" + id))
	return hashedIDPrefix + hex.EncodeToString(sum[:16])
}

// hashedForm reports whether id reads like a hashed id: "tmr_" and 32
// lower-case hex digits.
func hashedForm(id string) bool {
	rest, ok := strings.CutPrefix(id, hashedIDPrefix)
	if !ok || len(rest) != 32 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func validID(id string) bool {
	if len(id) > MaxRunIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '_', c == '-', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// WithMaxAttempts sets how many attempts each tool may use across the run.
// 0 means the default, [DefaultRunAttempts]. A negative n is ignored, the
// default kept, and reported by [ValidateRun].
func WithMaxAttempts(n int) RunOption {
	return func(c *runConfig) {
		if n < 0 {
			c.reject("WithMaxAttempts(%d): the cap must not be negative", n)
			return
		}
		c.max = n
	}
}

// WithToolMaxAttempts sets the cap of one tool, overriding [WithMaxAttempts]
// for it. 0 means the run's cap, as if the tool had none of its own. A
// negative n is ignored and reported by [ValidateRun].
func WithToolMaxAttempts(tool string, n int) RunOption {
	return func(c *runConfig) {
		switch {
		case n < 0:
			c.reject("WithToolMaxAttempts(%q, %d): the cap must not be negative", tool, n)
		case n == 0:
			delete(c.limits, tool)
		default:
			if c.limits == nil {
				c.limits = make(map[string]int)
			}
			c.limits[tool] = n
		}
	}
}

func newRunConfig(opts []RunOption) runConfig {
	var c runConfig
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// ValidateRun reports the first option value [NewRun] would ignore, or nil.
// The error is a plain error; a layer reporting it wraps it as a
// tool-definition-invalid/option_invalid error.
func ValidateRun(opts ...RunOption) error {
	return newRunConfig(opts).err
}

// NewRun returns a run budget. Invalid option values are ignored, the
// defaults kept (see [ValidateRun]), so it always returns a working Run.
func NewRun(opts ...RunOption) *Run {
	c := newRunConfig(opts)
	r := &Run{id: c.id, max: c.max, limits: c.limits}
	if c.store != nil && c.id != "" {
		r.store, r.guard = c.store, storeguard.New("run_budget", c.storeCfg, false, nil)
	}
	state.Register(state.Default, r, publishRun)
	return r
}

// publishRun reports the attempts r has given each tool to package state,
// while r lives.
func publishRun(r *Run, emit state.Emit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for tool, n := range r.used {
		emit(state.RunBudgetUsed, tool, "", float64(n))
	}
}

// ID returns the run's id as [WithID] made it — the id given, or the hash
// of one not of the plain shape — or "" when it has none. It is what
// stores and idempotency keys are keyed by: at most [MaxRunIDLen] bytes of
// ASCII letters, digits and "_-.:".
func (r *Run) ID() string {
	return r.id
}

type runKey struct{}

// WithRun returns a copy of ctx carrying a new run budget made with opts.
// Every call made with the returned context, or one derived from it, draws on
// that budget.
func WithRun(ctx context.Context, opts ...RunOption) context.Context {
	return ContextWithRun(ctx, NewRun(opts...))
}

// ContextWithRun returns a copy of ctx carrying r, for a loop that made its
// Run itself. A nil r returns ctx unchanged.
func ContextWithRun(ctx context.Context, r *Run) context.Context {
	if r == nil {
		return ctx
	}
	return context.WithValue(ctx, runKey{}, r)
}

// RunFrom returns the run budget carried by ctx, and whether there is one.
func RunFrom(ctx context.Context) (*Run, bool) {
	r, ok := ctx.Value(runKey{}).(*Run)
	return r, ok
}

// Limit returns the cap of tool.
func (r *Run) Limit(tool string) int {
	if n, ok := r.limits[tool]; ok {
		return n
	}
	if r.max == 0 {
		return DefaultRunAttempts
	}
	return r.max
}

// Take takes one attempt for tool and reports whether it could: false once
// the tool's cap is used up. Nothing is taken when it returns false.
func (r *Run) Take(tool string) bool {
	ok, _ := r.TakeContext(context.Background(), tool)
	return ok
}

// TakeContext is [Run.Take] for a caller with a context: with a
// [RunStore], the round trip is bounded by ctx as well as by the store
// timeout, and a ctx that ends first leaves the count to the Run without
// counting against the store. degraded says the store failed, did not
// answer in time or rests, and the Run counted locally: a caller that keeps
// a call record marks the call (the retry and hedge layers and package turn
// call toolmw.SetDegraded(ctx, "run_budget")). Without a store it is Take,
// and degraded is false.
func (r *Run) TakeContext(ctx context.Context, tool string) (ok, degraded bool) {
	limit := r.Limit(tool)
	if r.store != nil {
		ok, decided, degraded := r.sharedTake(ctx, tool, limit)
		if decided {
			return ok, false
		}
		return r.localTake(tool, limit), degraded
	}
	return r.localTake(tool, limit), false
}

// localTake takes one attempt of tool from the local count.
func (r *Run) localTake(tool string, limit int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.used[tool] >= limit {
		return false
	}
	if r.used == nil {
		r.used = make(map[string]int)
	}
	r.used[tool]++
	return true
}

// Used returns how many attempts tool has taken. With a [RunStore] it is
// the highest count the store has given this process, with the attempts counted
// locally since.
func (r *Run) Used(tool string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.used[tool]
}

// Remaining returns how many attempts tool may still take.
func (r *Run) Remaining(tool string) int {
	return r.Limit(tool) - r.Used(tool)
}
