package chaos

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/store"
)

// StoreFaults injects the faults given with [WithStoreFault] into the
// operations of the shared stores it wraps: a store that fails, or that
// answers late or not at all, as a fleet's Redis does in an outage. The
// layers meet it through their ports, exactly as they meet a real
// outage: each operation is bounded by the layer's store timeout, the
// call is decided on local state (or refused, where the layer fails
// closed), and the store is reported and rested.
//
// It wraps the ports of the engines here ([StoreFaults.TokenStore],
// [StoreFaults.RunStore], [StoreFaults.Results]); package
// middleware/chaos/chaosstore wraps those of the layers (breaker.Store,
// ratelimit.Store, runlimit.Store, spend.Store, approval.Store,
// dedupe.Store); a port of your own calls [StoreFaults.Enter] before each
// operation. It is enabled as the chaos layer is: [WithEnabled], [Enable]
// (the operation's context is the call's, so a run's Enable reaches its
// store operations), [WithEnabledWhen]. It is safe for concurrent use.
type StoreFaults struct {
	config
	plan plan
	seqs sync.Map // layer + "\x00" + op → *atomic.Uint64
}

// NewStoreFaults returns a StoreFaults that injects the faults given with
// [WithStoreFault]; [WithFault]'s are ignored. An invalid option value is
// returned as a tool-definition-invalid/option_invalid error.
func NewStoreFaults(opts ...Option) (*StoreFaults, error) {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return nil, cfg.err
	}
	if !cfg.seeded {
		cfg.seed = newSeed()
	}
	return &StoreFaults{config: cfg, plan: newPlan(cfg.storeRules)}, nil
}

// Enter decides the operation op (the port's method, in lower case) of
// the store of layer (a name of store.Error.Layer), made with ctx: it
// returns nil when the operation should go ahead, after the latency it
// injected, if any; or the error the operation must end with, without
// doing anything: an injected [StoreFailure]'s, or ctx's error when ctx
// ended during an injected latency. A store fault shows as
// "store_failure" or "store_latency" in the Call ctx carries
// (toolmw.Call.Chaos), when it carries one.
func (s *StoreFaults) Enter(ctx context.Context, layer, op string) error {
	if len(s.storeRules) == 0 || !s.enabled && s.when == nil && !switched.Load() {
		return nil
	}
	c, t, ok := s.target(ctx)
	if !ok {
		return nil
	}
	seq := s.counter(layer, op).Add(1)
	f, ok := pick(s.plan.bands(layer), seqUnit(s.seed, layer, op, seq))
	if !ok {
		return nil
	}
	name := f.Name()
	if f.kind == latency {
		name = "store_latency"
	}
	toolmw.SetChaos(ctx, name)
	if s.onInject != nil {
		s.onInject(Injection{Fault: name, Tool: t.Tool, Run: t.Run, CallID: c.ID, Attempt: t.Attempt, Seq: seq, Layer: layer, Op: op})
	}
	if f.kind == storeFailure {
		return f.storeErr
	}
	return s.wait(ctx, f.d)
}

func (s *StoreFaults) counter(layer, op string) *atomic.Uint64 {
	key := layer + "\x00" + op
	if n, ok := s.seqs.Load(key); ok {
		return n.(*atomic.Uint64)
	}
	n, _ := s.seqs.LoadOrStore(key, new(atomic.Uint64))
	return n.(*atomic.Uint64)
}

// TokenStore returns ts with faults injected into its operations, as
// those of layer "retry_budget" (op "apply"). A failed Apply returns the
// zero balance, as a store that did not answer.
func (s *StoreFaults) TokenStore(ts budget.TokenStore) budget.TokenStore {
	return tokenStore{s, ts}
}

type tokenStore struct {
	f    *StoreFaults
	next budget.TokenStore
}

func (t tokenStore) Apply(ctx context.Context, op budget.TokenOp) (budget.TokenBalance, error) {
	if err := t.f.Enter(ctx, "retry_budget", "apply"); err != nil {
		return budget.TokenBalance{}, err
	}
	return t.next.Apply(ctx, op)
}

// RunStore returns rs with faults injected into its operations, as those
// of layer "run_budget" (op "take").
func (s *StoreFaults) RunStore(rs budget.RunStore) budget.RunStore {
	return runStore{s, rs}
}

type runStore struct {
	f    *StoreFaults
	next budget.RunStore
}

func (r runStore) Take(ctx context.Context, id, tool string, limit int) (int, bool, error) {
	if err := r.f.Enter(ctx, "run_budget", "take"); err != nil {
		return 0, false, err
	}
	return r.next.Take(ctx, id, tool, limit)
}

// Results returns rs with faults injected into its operations, as those
// of layer (the layer it is given to: "cache" or "fallback"; ops "get" and
// "set").
func (s *StoreFaults) Results(rs store.Results, layer string) store.Results {
	return results{s, rs, layer}
}

type results struct {
	f     *StoreFaults
	next  store.Results
	layer string
}

func (r results) Get(ctx context.Context, key string) ([]byte, time.Time, error) {
	if err := r.f.Enter(ctx, r.layer, "get"); err != nil {
		return nil, time.Time{}, err
	}
	return r.next.Get(ctx, key)
}

func (r results) Set(ctx context.Context, key string, value []byte, made time.Time, ttl time.Duration) error {
	if err := r.f.Enter(ctx, r.layer, "set"); err != nil {
		return err
	}
	return r.next.Set(ctx, key, value, made, ttl)
}
