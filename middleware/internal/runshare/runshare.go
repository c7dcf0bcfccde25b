// Package runshare is what the two layers that keep a named run's state in
// a shared store have in common (runlimit's call counts, spend's spend):
// the options about the store; the replica's own state of each run, kept
// by run id for the store's outages; the store asked through a guard, the
// call marked degraded when it is decided without it; an answer of
// corrupt state, which ends the call without resting the store; and the
// operations the store must learn even after an outage, of which a
// corrupt answer is reported and not tried again.
package runshare

import (
	"context"
	"errors"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/storeguard"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
	"github.com/toolmw/toolmw/store"
)

// MaxLocalRuns bounds the named runs whose own state a replica keeps for
// the store's outages; past it, the run used least recently is forgotten.
const MaxLocalRuns = 1 << 16

// Config is what a layer's options say of its store St: the store,
// how the layer uses it, and whether the layer fails closed.
type Config[St any] struct {
	Store      St
	Options    store.Config
	FailClosed bool
}

// Set sets the store and its options, or returns the options' error
// (store.NewConfig's) and changes nothing.
func (c *Config[St]) Set(s St, opts []store.Option) error {
	cfg, err := store.NewConfig(opts...)
	if err != nil {
		return err
	}
	c.Store, c.Options = s, cfg
	return nil
}

// Shared is the state of one layer with a store St: its guard, whether it
// fails closed, and the replica's own state L of each named run. It is
// safe for concurrent use.
type Shared[St, L any] struct {
	Store St // the store; read-only

	layer      string
	guard      *storeguard.Guard
	failClosed bool
	down       error // ends a call the store could not serve, failing closed
	corrupt    error // ends a call the store answered with corrupt state
	local      *keyed.Map[*L]
}

// New returns the shared state of layer (the name of store.Error and of
// toolmw.Call.Degraded) with the store c. A call the store could not serve
// ends with down when c fails closed, one it answered with corrupt state
// with corrupt; newLocal makes the replica's state of a run.
func New[St, L any](layer string, c Config[St], down, corrupt error, newLocal func() *L) *Shared[St, L] {
	return &Shared[St, L]{Store: c.Store, layer: layer, guard: storeguard.New(layer, c.Options, c.FailClosed, nil),
		failClosed: c.FailClosed, down: down, corrupt: corrupt,
		local: keyed.New(MaxLocalRuns, func(string) *L { return newLocal() })}
}

// Local returns the replica's own state of the run named id.
func (s *Shared[St, L]) Local(id string) *L { return s.local.Get(id) }

// Ask asks the store through f, which does the operation op of a call.
// When f answered, it returns false, true, nil: the layer uses the answer.
// Otherwise local says the store could not serve the call (the call is
// then marked degraded), sent that f was called and its operation may
// land yet, late (the layer settles it), and end, when not nil, is the
// error to end the call with: the call's own deadline or cancellation,
// the layer's refusal when it fails closed, or its refusal of a store that
// answered with corrupt state (which is reported, does not rest the store,
// and leaves nothing to settle).
func (s *Shared[St, L]) Ask(ctx context.Context, op string, f func(context.Context) error) (local, sent bool, end error) {
	var corrupt error
	local, end = s.guard.Ask(ctx, op, "", func(ctx context.Context) error {
		sent = true
		err := f(ctx)
		if errors.Is(err, store.ErrCorrupt) {
			corrupt = err // the store answered, with state it cannot count on
			return nil
		}
		return err
	})
	switch {
	case corrupt != nil:
		s.guard.Corrupt(op, "", corrupt)
		return false, false, s.corrupt
	case local:
		toolmw.SetDegraded(ctx, s.layer)
		if s.failClosed {
			return true, sent, s.down
		}
	}
	return local, sent, end
}

// Eventually does op through f even if the store is down now (see
// storeguard.Guard.Eventually). An answer of corrupt state is reported,
// and neither rests the store nor is tried again.
func (s *Shared[St, L]) Eventually(ctx context.Context, op string, f func(context.Context) error) {
	s.guard.Eventually(ctx, op, "", func(ctx context.Context) error {
		err := f(ctx)
		if errors.Is(err, store.ErrCorrupt) {
			s.guard.After(op, "", err)
			return nil
		}
		return err
	})
}
