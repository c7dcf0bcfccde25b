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
	cluster *cluster // the nodes' rests, on a *redis.ClusterClient; nil otherwise
	prefix  string
	timeout time.Duration
	ttl     time.Duration
}

// An Option configures [New].
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
// retry bucket, live after their last use (0 means [DefaultTTL]). A retry
// bucket that expires starts full again; a run's counts that expire start
// from zero, so keep it longer than a run lasts. Rate-limit keys expire on
// their own schedule (when their bucket is full again). A negative d, or one
// under a millisecond, is invalid.
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

// A ClientOptionError is the error [New] returns for a client made with
// options under which a slow, failing or new connection to Redis would
// hold calls past their deadlines and the Store's timeout. Option names
// the option and the value the Store needs; Reason says what the other
// value costs. Every such option is a setting of the client's constructor:
// make the client again with it.
type ClientOptionError struct {
	Option string // e.g. "ContextTimeoutEnabled: true"
	Reason string
}

// Error says which option the client needs and why.
func (e *ClientOptionError) Error() string {
	return "redisstate: the client must be made with " + e.Option + ", or " + e.Reason
}

// refuse returns a copy of e, so that a caller changing the error it got
// changes no other.
func refuse(e *ClientOptionError) error {
	c := *e
	return &c
}

// errNoContextTimeout: a client that ignores contexts' deadlines would let
// a slow Redis block calls for its ReadTimeout (5 s by default in go-redis
// v9.23).
var errNoContextTimeout = &ClientOptionError{Option: "ContextTimeoutEnabled: true",
	Reason: "a slow Redis blocks calls for the client's read timeout instead of the Store's"}

// errRoutingPolicies: go-redis v9.23's ClusterClient, unless made with
// DisableRoutingPolicies, looks each command up in its COMMAND table
// (ClusterClient.cmdInfo, osscluster.go), which it fills on the first
// command from one node, under a lock every command takes, with a 5 s
// timeout of its own instead of the command's deadline: the first calls of
// a new client, and every call while a fill fails, wait for it.
var errRoutingPolicies = &ClientOptionError{Option: "DisableRoutingPolicies: true",
	Reason: "the cluster client fetches its command table on the first commands with a 5 s timeout of its own, " +
		"under a lock every command takes: calls wait past their deadlines"}

// errReadOnly: with ReadOnly (which RouteByLatency and RouteRandomly turn
// on), a ClusterClient looks every command up in its COMMAND table (to
// send reads to replicas), under the same lock and 5 s timeout; and the
// Store's scripts all write, so they gain nothing from replicas.
var errReadOnly = &ClientOptionError{Option: "ReadOnly, RouteByLatency and RouteRandomly false",
	Reason: "the cluster client looks every command up in a command table it fetches with a 5 s timeout of its own, " +
		"under a lock every command takes: calls wait past their deadlines"}

// New returns a Store on client, which the caller made and closes. The
// client must honour contexts' deadlines, or a slow Redis would hold calls
// past them; New refuses, with a [*ClientOptionError]:
//
//   - a *redis.Client (NewClient, or NewFailoverClient for Sentinel, which
//     NewUniversalClient returns for a MasterName), ClusterClient or Ring
//     made without ContextTimeoutEnabled: true;
//   - a *redis.ClusterClient made without DisableRoutingPolicies: true, or
//     with ReadOnly, RouteByLatency or RouteRandomly (so also one made by
//     NewFailoverClusterClient with them).
//
// It refuses a nil client and an option value it cannot use (see
// [Validate]) too. On a ClusterClient the Store rests a node that fails
// ([NodeRest]) and has the client reload its slot map (see the README's
// "Deploying" section). It is safe for concurrent use.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	o := newOptions(opts)
	if o.err != nil {
		return nil, o.err
	}
	var nodes *cluster
	switch c := client.(type) {
	case nil:
		return nil, errors.New("redisstate: New needs a client")
	case *redis.Client:
		if c == nil {
			return nil, errors.New("redisstate: New needs a client")
		}
		if !c.Options().ContextTimeoutEnabled {
			return nil, refuse(errNoContextTimeout)
		}
	case *redis.ClusterClient:
		if c == nil {
			return nil, errors.New("redisstate: New needs a client")
		}
		switch opt := c.Options(); {
		case !opt.ContextTimeoutEnabled:
			return nil, refuse(errNoContextTimeout)
		case !opt.DisableRoutingPolicies:
			return nil, refuse(errRoutingPolicies)
		case opt.ReadOnly || opt.RouteByLatency || opt.RouteRandomly:
			return nil, refuse(errReadOnly)
		}
		nodes = newCluster(c)
	case *redis.Ring:
		if c == nil {
			return nil, errors.New("redisstate: New needs a client")
		}
		if !c.Options().ContextTimeoutEnabled {
			return nil, refuse(errNoContextTimeout)
		}
	}
	return &Store{client: client, cluster: nodes, prefix: o.prefix, timeout: o.timeout, ttl: o.ttl}, nil
}

// run runs script on keys with args, as script.Run would, for the ports:
// keys[0] is the one key each script touches. On a cluster, it fails at
// once when the key's node rests (see [NodeRest]), and a failure of the
// node rests it and comes back as a partial outage (an error with a
// PartialOutage method returning true).
func (s *Store) run(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if s.cluster == nil {
		return script.Run(ctx, s.client, keys, args...)
	}
	if err := s.cluster.resting(keys[0]); err != nil {
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(err)
		return cmd
	}
	b := timeLeft(ctx)
	cmd := script.Run(ctx, s.client, keys, args...)
	if err := cmd.Err(); err != nil {
		cmd.SetErr(s.cluster.failed(keys[0], err, b))
	}
	return cmd
}

// do runs f, one command on key with ctx, as run runs a script: on a
// cluster, not at all while key's node rests, and a failure of the node
// rests it.
func (s *Store) do(ctx context.Context, key string, f func() error) error {
	if s.cluster == nil {
		return f()
	}
	if err := s.cluster.resting(key); err != nil {
		return err
	}
	b := timeLeft(ctx)
	if err := f(); err != nil {
		return s.cluster.failed(key, err, b)
	}
	return nil
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
