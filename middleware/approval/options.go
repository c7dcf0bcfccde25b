package approval

import (
	"fmt"
	"time"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option configures a [Desk] and the layer it makes.
type Option func(*config)

type config struct {
	store       Store
	key         []byte
	clock       clock.Clock
	storeCfg    store.Config
	scrubber    *scrub.Scrubber
	runOptional bool
	elicitTTL   time.Duration // > 0: ask the user through the call's session (WithElicit)
	onVerdict   func(Verdict)
	err         error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("approval: "+format, args...))
	}
}

// WithStore keeps requests and decisions in s, used as opts say (package
// store): each operation bounded by store.WithTimeout (default
// store.DefaultTimeout) and every operation the store did not complete
// reported to store.WithOnError, as a store.Error with Layer "approval",
// Op "load", "save", "consume" or "cancel" and Refused set: the layer
// fails closed. It is not reported when the caller's own context ended
// first (except a "cancel", which does not depend on it), nor for the
// outcomes a Store reports by design ([ErrNotFound], [ErrConflict],
// [ErrConsumed], [ErrCanceled]); a store that panicked is reported with
// [ErrStorePanicked]. nil s means the default, a [MemoryStore] of the
// Desk's own, used as opts say. A store given here must come with
// [WithSealKey]: rows another Desk or process wrote can be checked only with
// the key they were sealed with. An invalid option is reported as
// [Validate] says.
func WithStore(s Store, opts ...store.Option) Option {
	return func(c *config) {
		cfg, err := store.NewConfig(opts...)
		if err != nil {
			c.reject("WithStore: %v", err)
			return
		}
		c.store, c.storeCfg = s, cfg
	}
}

// WithSealKey seals every row with key (HMAC-SHA256): a row changed, forged
// with another key or copied from another request fails closed. The key
// must be at least [MinKeyLen] bytes; keep it secret and give the same one
// to every process sharing a store. nil means the default, a key made at
// random for the Desk, which suits its own MemoryStore only. The Desk keeps
// a copy.
func WithSealKey(key []byte) Option {
	return func(c *config) {
		if key == nil {
			return
		}
		if len(key) < MinKeyLen {
			c.reject("WithSealKey: a key of %d bytes; at least %d are needed", len(key), MinKeyLen)
			return
		}
		c.key = append([]byte(nil), key...)
	}
}

// WithClock sets the clock that dates requests and expires approvals.
// nil means the default, the system clock.
func WithClock(c clock.Clock) Option {
	return func(cfg *config) { cfg.clock = c }
}

// WithScrubber sets the scrubber of the summaries a reviewer reads. nil
// means the default scrubber of package scrub.
func WithScrubber(s *scrub.Scrubber) Option {
	return func(c *config) { c.scrubber = s }
}

// WithElicit makes the Desk ask the user of a gated call directly, when
// the call's transport can (a toolmw.Session that elicits, as an MCP
// client that declares elicitation does): a call with no decision yet is
// shown to the user with its summary, and the answer is the decision — an
// approval for ttl, which the call then uses at once, or a denial. When the
// transport cannot ask, or the user cancels, the call ends as
// approval-pending as without it, for a reviewer to decide through the
// Desk. The question carries only the request's scrubbed summary. ttl must
// be above 0 and at most MaxTTL.
func WithElicit(ttl time.Duration) Option {
	return func(c *config) {
		if ttl <= 0 || ttl > MaxTTL {
			c.reject("WithElicit(%v): the approval's lifetime must be above 0 and at most %v", ttl, MaxTTL)
			return
		}
		c.elicitTTL = ttl
	}
}

// WithRunOptional lets a gated call without a run (budget.WithRun) ask
// for approval. Without it such a call ends as tool-not-permitted/
// approval_unbound and nothing runs, because a call without a run can be
// bound only to the process: its approval id is a hash of the tool and the
// call id alone, so every conversation of the process that makes a call
// with the same id (call_1, say) shares one request, and one would run on
// another's approval. Give it only to a Desk whose process serves one
// conversation at a time, or whose model call ids are unique across
// conversations.
func WithRunOptional() Option {
	return func(c *config) { c.runOptional = true }
}

// WithOnVerdict calls f with each decision a reviewer makes through the
// Desk ([Desk.Approve], [Desk.ApproveBy], [Desk.Deny], [Desk.DenyBy], and
// the user's answer under [WithElicit]) once it is stored, on the
// deciding goroutine and under no lock of the Desk; a panic in f is
// dropped. A Verdict carries no arguments, not even scrubbed. nil means no
// callback.
func WithOnVerdict(f func(Verdict)) Option {
	return func(c *config) { c.onVerdict = f }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.store != nil && c.key == nil && c.err == nil {
		c.reject("WithStore needs WithSealKey: rows written elsewhere cannot be checked with a key made at random")
	}
	return c
}

// Validate reports the first invalid option value, as a
// tool-definition-invalid error with code option_invalid, or nil: the
// error toolmw.Wrap reports for the middleware [New] makes of them.
func Validate(opts ...Option) error {
	return newConfig(opts).err
}
