package redisstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of a [Store].
const (
	DefaultPrefix  = "toolmw:"             // the start of every key
	DefaultTimeout = 50 * time.Millisecond // one operation, when the context has no deadline
	DefaultTTL     = 24 * time.Hour        // an idle run's counts and an idle retry bucket
)

// MaxPrefixLen bounds [WithPrefix], in bytes.
const MaxPrefixLen = 64

// Store is toolmw's shared state on one Redis deployment: rate limits
// ([Store.RateLimits]), retry token budgets ([Store.RetryBudget]), run
// attempt counts ([Store.Runs]), per-run call counts ([Store.RunCalls]),
// per-run spend ([Store.Spend]), breakers ([Store.Breakers]) and approval
// decisions ([Store.Approvals]). Every key it writes starts with its
// prefix and expires by itself. It never holds a lock across a tool call:
// each operation is one Lua script, one round trip.
//
// A Store is safe for concurrent use; every replica of a fleet makes its
// own, on its own client, with the same prefix.
type Store struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
	ttl     time.Duration
}

// An Option configures [New].
//
// Options are applied once, by New; an Option may be reused and shared
// between goroutines.
type Option func(*options)

type options struct {
	prefix  string
	timeout time.Duration
	ttl     time.Duration
	err     error
}

func (o *options) reject(format string, args ...any) {
	if o.err == nil {
		o.err = fmt.Errorf("redisstate: "+format, args...)
	}
}

// WithPrefix sets the start of every key the Store writes ("" means
// [DefaultPrefix]): give each application its own. A prefix is at most
// [MaxPrefixLen] bytes of printable ASCII; another is invalid.
// The Option may be shared between goroutines.
func WithPrefix(p string) Option {
	return func(o *options) {
		if len(p) > MaxPrefixLen {
			o.reject("WithPrefix: a prefix is at most %d bytes", MaxPrefixLen)
			return
		}
		for i := 0; i < len(p); i++ {
			if p[i] < 0x21 || p[i] > 0x7e {
				o.reject("WithPrefix: a prefix is printable ASCII without spaces")
				return
			}
		}
		if p != "" {
			o.prefix = p
		}
	}
}

// WithTimeout bounds one operation whose context has no deadline (0 means
// [DefaultTimeout]). The layers' ports always give one, shorter: this bound
// is for direct use. A negative d is invalid.
// The Option may be shared between goroutines.
func WithTimeout(d time.Duration) Option {
	return func(o *options) {
		switch {
		case d < 0:
			o.reject("WithTimeout(%v): the timeout must not be negative", d)
		case d > 0:
			o.timeout = d
		}
	}
}

// WithTTL sets how long a run's attempt and call counts and spend, and a
// retry bucket, live after their last use (0 means [DefaultTTL]). A retry bucket that
// expires starts full again; a run's counts that expire start from zero, so
// keep it longer than a run lasts. Rate-limit keys expire on their own schedule
// (when their bucket is full again). A negative d, or one under a
// millisecond, is invalid.
// The Option may be shared between goroutines.
func WithTTL(d time.Duration) Option {
	return func(o *options) {
		switch {
		case d < 0 || d > 0 && d < time.Millisecond:
			o.reject("WithTTL(%v): the time to live must be 0 or at least a millisecond", d)
		case d > 0:
			o.ttl = d
		}
	}
}

func newOptions(opts []Option) options {
	o := options{prefix: DefaultPrefix, timeout: DefaultTimeout, ttl: DefaultTTL}
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// Validate reports the first option value [New] cannot use, or nil. It is
// safe for concurrent use.
func Validate(opts ...Option) error {
	return newOptions(opts).err
}

// errNoContextTimeout: a client that ignores contexts' deadlines would let
// a slow Redis block calls for its ReadTimeout (3 s by default).
var errNoContextTimeout = errors.New("redisstate: the client must be made with ContextTimeoutEnabled: true, " +
	"or a slow Redis blocks calls for the client's read timeout instead of the Store's")

// New returns a Store on client, which the caller made and closes. The
// client must honour contexts' deadlines: a *redis.Client, ClusterClient or
// Ring made without ContextTimeoutEnabled: true is refused, as are a nil
// client and an option value New cannot use (see [Validate]). It is safe
// for concurrent use.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	o := newOptions(opts)
	if o.err != nil {
		return nil, o.err
	}
	switch c := client.(type) {
	case nil:
		return nil, errors.New("redisstate: New needs a client")
	case *redis.Client:
		if c == nil {
			return nil, errors.New("redisstate: New needs a client")
		}
		if !c.Options().ContextTimeoutEnabled {
			return nil, errNoContextTimeout
		}
	case *redis.ClusterClient:
		if c == nil || !c.Options().ContextTimeoutEnabled {
			return nil, errNoContextTimeout
		}
	case *redis.Ring:
		if c == nil || !c.Options().ContextTimeoutEnabled {
			return nil, errNoContextTimeout
		}
	}
	return &Store{client: client, prefix: o.prefix, timeout: o.timeout, ttl: o.ttl}, nil
}

// key returns the key of kind for a name that may be hostile: the prefix,
// the kind and 32 hex digits of the name's SHA-256, so a key is bounded
// and has no byte the name chose, and keys of different names differ.
func (s *Store) key(kind, name string) string {
	sum := sha256.Sum256([]byte(name))
	var b [32]byte
	hex.Encode(b[:], sum[:16])
	return s.prefix + kind + string(b[:])
}

// bound returns ctx bounded by the Store's timeout when it has no deadline.
func (s *Store) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, s.timeout)
}

// ints reads the two integers a script returns.
func ints(v any, err error) (int64, int64, error) {
	if err != nil {
		return 0, 0, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return 0, 0, fmt.Errorf("redisstate: unexpected reply %T", v)
	}
	x, ok1 := a[0].(int64)
	y, ok2 := a[1].(int64)
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("redisstate: unexpected reply %T, %T", a[0], a[1])
	}
	return x, y, nil
}
