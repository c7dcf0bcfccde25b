// Package chaosstore injects the store faults of a [chaos.StoreFaults]
// into the store ports of the layers: breaker.Store, ratelimit.Store,
// runlimit.Store, spend.Store, approval.Store (and approval.Lister) and
// dedupe.Store. Each wrapper asks [chaos.StoreFaults.Enter] before every
// operation, under the layer's name and the operation's (the method, in
// lower case), and then either fails the operation without doing it or
// lets it through, late when a latency was injected. The ports of the
// engines (budget.TokenStore, budget.RunStore, store.Results) are wrapped
// by chaos.StoreFaults itself.
//
//	faults, err := chaos.NewStoreFaults(chaos.WithEnabled(true), chaos.WithSeed(1),
//		chaos.WithStoreFault(chaos.StoreFailure(nil), 0.2, "runlimit"))
//	limit := runlimit.New(1, runlimit.WithStore(chaosstore.RunLimit(faults, shared.RunCalls())))
//
// This package imports the packages of the six layers whose ports it
// wraps, and so links what they link (gobreaker, x/time/rate): import it
// in tests and staging builds. The wrappers are safe for concurrent use
// when the stores they wrap are.
package chaosstore

import (
	"context"
	"time"

	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/chaos"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
)

// The layer names the wrappers enter their operations under, as
// store.Error.Layer and toolmw.Call.Degraded name them.
const (
	LayerBreaker   = "breaker"
	LayerRateLimit = "ratelimit"
	LayerRunLimit  = "runlimit"
	LayerSpend     = "spend"
	LayerApproval  = "approval"
	LayerDedupe    = "dedupe"
)

// Breaker returns s with f's faults injected into its operations (layer
// "breaker"; ops "load", "acquire", "report").
func Breaker(f *chaos.StoreFaults, s breaker.Store) breaker.Store { return breakerStore{f, s} }

type breakerStore struct {
	f    *chaos.StoreFaults
	next breaker.Store
}

func (b breakerStore) Load(ctx context.Context, key string) (breaker.Snapshot, error) {
	if err := b.f.Enter(ctx, LayerBreaker, "load"); err != nil {
		return breaker.Snapshot{}, err
	}
	return b.next.Load(ctx, key)
}

func (b breakerStore) Acquire(ctx context.Context, key string, l breaker.Lease) (breaker.Snapshot, bool, error) {
	if err := b.f.Enter(ctx, LayerBreaker, "acquire"); err != nil {
		return breaker.Snapshot{}, false, err
	}
	return b.next.Acquire(ctx, key, l)
}

func (b breakerStore) Report(ctx context.Context, key string, r breaker.Report) (breaker.Snapshot, error) {
	if err := b.f.Enter(ctx, LayerBreaker, "report"); err != nil {
		return breaker.Snapshot{}, err
	}
	return b.next.Report(ctx, key, r)
}

// RateLimit returns s with f's faults injected into its operations (layer
// "ratelimit"; op "admit").
func RateLimit(f *chaos.StoreFaults, s ratelimit.Store) ratelimit.Store { return rateStore{f, s} }

type rateStore struct {
	f    *chaos.StoreFaults
	next ratelimit.Store
}

func (r rateStore) Admit(ctx context.Context, req ratelimit.Request) (ratelimit.Decision, error) {
	if err := r.f.Enter(ctx, LayerRateLimit, "admit"); err != nil {
		return ratelimit.Decision{}, err
	}
	return r.next.Admit(ctx, req)
}

// RunLimit returns s with f's faults injected into its operations (layer
// "runlimit"; ops "take", "release", "record").
func RunLimit(f *chaos.StoreFaults, s runlimit.Store) runlimit.Store { return runStore{f, s} }

type runStore struct {
	f    *chaos.StoreFaults
	next runlimit.Store
}

func (r runStore) Take(ctx context.Context, id, tool string, limit int, op string) (bool, error) {
	if err := r.f.Enter(ctx, LayerRunLimit, "take"); err != nil {
		return false, err
	}
	return r.next.Take(ctx, id, tool, limit, op)
}

func (r runStore) Release(ctx context.Context, id, tool, op string) error {
	if err := r.f.Enter(ctx, LayerRunLimit, "release"); err != nil {
		return err
	}
	return r.next.Release(ctx, id, tool, op)
}

func (r runStore) Record(ctx context.Context, id, tool, op string) error {
	if err := r.f.Enter(ctx, LayerRunLimit, "record"); err != nil {
		return err
	}
	return r.next.Record(ctx, id, tool, op)
}

// Spend returns s with f's faults injected into its operations (layer
// "spend"; ops "reserve", "settle").
func Spend(f *chaos.StoreFaults, s spend.Store) spend.Store { return spendStore{f, s} }

type spendStore struct {
	f    *chaos.StoreFaults
	next spend.Store
}

func (s spendStore) Reserve(ctx context.Context, id string, limit, amount int64, op string) (int64, int64, bool, error) {
	if err := s.f.Enter(ctx, LayerSpend, "reserve"); err != nil {
		return 0, 0, false, err
	}
	return s.next.Reserve(ctx, id, limit, amount, op)
}

func (s spendStore) Settle(ctx context.Context, id, op string, charge int64) error {
	if err := s.f.Enter(ctx, LayerSpend, "settle"); err != nil {
		return err
	}
	return s.next.Settle(ctx, id, op, charge)
}

// Approval returns s with f's faults injected into its operations (layer
// "approval"; ops "load", "save", "consume", "cancel", and "list" when s
// is an approval.Lister, which the returned Store then is too).
func Approval(f *chaos.StoreFaults, s approval.Store) approval.Store {
	a := approvalStore{f, s}
	if l, ok := s.(approval.Lister); ok {
		return listingStore{a, l}
	}
	return a
}

type approvalStore struct {
	f    *chaos.StoreFaults
	next approval.Store
}

func (a approvalStore) Load(ctx context.Context, id string) ([]byte, error) {
	if err := a.f.Enter(ctx, LayerApproval, "load"); err != nil {
		return nil, err
	}
	return a.next.Load(ctx, id)
}

func (a approvalStore) Save(ctx context.Context, id string, prev, row []byte) error {
	if err := a.f.Enter(ctx, LayerApproval, "save"); err != nil {
		return err
	}
	return a.next.Save(ctx, id, prev, row)
}

func (a approvalStore) Consume(ctx context.Context, nonce, op string) error {
	if err := a.f.Enter(ctx, LayerApproval, "consume"); err != nil {
		return err
	}
	return a.next.Consume(ctx, nonce, op)
}

func (a approvalStore) Cancel(ctx context.Context, nonce, op string) error {
	if err := a.f.Enter(ctx, LayerApproval, "cancel"); err != nil {
		return err
	}
	return a.next.Cancel(ctx, nonce, op)
}

type listingStore struct {
	approvalStore
	lister approval.Lister
}

func (l listingStore) List(ctx context.Context, after string, limit int) ([]approval.Listed, error) {
	if err := l.f.Enter(ctx, LayerApproval, "list"); err != nil {
		return nil, err
	}
	return l.lister.List(ctx, after, limit)
}

// Dedupe returns s with f's faults injected into its operations (layer
// "dedupe"; ops "claim", "renew", "finish", "release").
func Dedupe(f *chaos.StoreFaults, s dedupe.Store) dedupe.Store { return dedupeStore{f, s} }

type dedupeStore struct {
	f    *chaos.StoreFaults
	next dedupe.Store
}

func (d dedupeStore) Claim(ctx context.Context, run, key string, c dedupe.Claim) (dedupe.Record, error) {
	if err := d.f.Enter(ctx, LayerDedupe, "claim"); err != nil {
		return dedupe.Record{}, err
	}
	return d.next.Claim(ctx, run, key, c)
}

func (d dedupeStore) Renew(ctx context.Context, run, key, op string, until, now time.Time, keep time.Duration) error {
	if err := d.f.Enter(ctx, LayerDedupe, "renew"); err != nil {
		return err
	}
	return d.next.Renew(ctx, run, key, op, until, now, keep)
}

func (d dedupeStore) Finish(ctx context.Context, run, key, op string, outcome []byte, now time.Time, keep time.Duration) error {
	if err := d.f.Enter(ctx, LayerDedupe, "finish"); err != nil {
		return err
	}
	return d.next.Finish(ctx, run, key, op, outcome, now, keep)
}

func (d dedupeStore) Release(ctx context.Context, run, key, op string) error {
	if err := d.f.Enter(ctx, LayerDedupe, "release"); err != nil {
		return err
	}
	return d.next.Release(ctx, run, key, op)
}
