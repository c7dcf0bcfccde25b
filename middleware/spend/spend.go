package spend

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/internal/single"
	"github.com/toolmw/toolmw/state"
	"github.com/toolmw/toolmw/taxonomy"
)

// New returns the spend layer: each call of a tool with a cost declared by
// [Fixed] or [Metered] is charged to the spend limit its context carries
// ([ContextWithLimit]), and a call that could take the run past it does not run.
// Tools without a cost, and calls whose context carries no limit, pass
// through untouched; without any cost the layer is switched off. With
// [WithStore], a named run's spend is kept in the Store, so its limit holds
// across replicas (see the package documentation). An invalid option makes
// a [toolmw.Reject] middleware (see [Validate]).
//
// The Middleware and the Tools it makes are safe for concurrent use.
func New(opts ...Option) toolmw.Middleware {
	cfg := newConfig(opts)
	if cfg.err != nil {
		return toolmw.Reject(cfg.err)
	}
	if len(cfg.costs) == 0 {
		return func(next toolmw.Tool) toolmw.Tool { return next }
	}
	l := &layer{config: cfg, meters: map[string]*meter{}}
	for tool := range cfg.costs {
		l.meters[tool] = new(meter)
	}
	if cfg.store.Store != nil {
		l.shared = newShared(cfg.store)
	}
	state.Register(state.Default, l, publish)
	return func(next toolmw.Tool) toolmw.Tool {
		return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
			return l.call(ctx, next, args)
		}
	}
}

// MaxAmount is the largest cost or limit the layer takes, in whatever unit
// the application counts (a currency, tokens, credits). Amounts are kept
// as whole billionths of a unit, so sums are exact and never overflow: a
// limit of MaxAmount holds 10^18 of them. A cost is rounded up to the
// billionth and a limit down, so rounding never lets a call run that the
// amounts as written would refuse: Fixed(4e-10) costs one billionth, not
// nothing. An amount is read as its shortest decimal form (the one
// strconv.FormatFloat gives), so one written with nine decimals or fewer,
// such as 0.1, is kept exactly.
const MaxAmount = 1e9

// nano is how many of the layer's units make one amount; decimals how
// many decimal digits that is.
const (
	nano     = 1e9
	decimals = 9
)

// units returns a cost in whole billionths, rounded up, or false when it
// is not an amount the layer takes: NaN, infinite, negative or above
// MaxAmount.
func units(amount float64) (int64, bool) { return toUnits(amount, true) }

// limitUnits returns a limit in whole billionths, rounded down, or false
// as units does.
func limitUnits(amount float64) (int64, bool) { return toUnits(amount, false) }

// toUnits converts amount to whole billionths, rounding up or down what is
// left below a billionth of its shortest decimal form. It does not
// allocate.
func toUnits(amount float64, up bool) (int64, bool) {
	if !(amount >= 0 && amount <= MaxAmount) { // also NaN
		return 0, false
	}
	if amount < 1/nano { // a fraction of one billionth
		if up && amount > 0 {
			return 1, true
		}
		return 0, true
	}
	// At least a billionth and at most 10^9: the shortest form is at most
	// 17 significant digits, 10 before the point and 9 leading zeros after
	// it, so it fits the buffer.
	var buf [48]byte
	digits := strconv.AppendFloat(buf[:0], amount, 'f', -1, 64)
	var u int64
	frac, rest := -1, false // digits after the point so far (-1: before it); a non-zero digit past the ninth
	for _, c := range digits {
		switch {
		case c == '.':
			frac = 0
		case frac >= decimals:
			rest = rest || c != '0'
		default:
			u = u*10 + int64(c-'0')
			if frac >= 0 {
				frac++
			}
		}
	}
	for range decimals - max(frac, 0) {
		u *= 10
	}
	if rest && up {
		u++
	}
	return u, true
}

func amount(u int64) float64 { return float64(u) / nano }

// cost is what one call of a tool costs: fixed, or read from its result
// up to a maximum.
type cost struct {
	max  int64                       // the reservation, in units: the fixed cost, or the metered maximum
	read func(toolmw.Result) float64 // nil for a fixed cost
}

// Fixed declares that every call of the tool named costs amount, rounded
// up to the billionth (see [MaxAmount]): 0 to [MaxAmount]; NaN, an infinity, a negative or larger amount, a name that
// is not a tool name, or a tool given a second cost is invalid.
func Fixed(tool string, amount float64) Option {
	return func(c *config) { c.declare("Fixed", tool, amount, nil) }
}

// Metered declares that a call of the tool named costs what costOf reads
// from its result, at most max (0 to [MaxAmount]): the layer reserves max
// before the call and charges what costOf says after it, each rounded up
// to the billionth (see [MaxAmount]). A cost that is
// NaN, infinite, negative or above max, or a costOf that panics, is charged
// as max and reported to [WithOnBadCost]. costOf runs only on a success (a
// failure that may have acted is charged max); it must be safe for
// concurrent use and must not modify the result. A nil costOf, or a max,
// name or second cost as Fixed would reject, is invalid.
func Metered(tool string, max float64, costOf func(toolmw.Result) float64) Option {
	return func(c *config) { c.declare("Metered", tool, max, costOf) }
}

// BadCost reports a metered cost that was not an amount within the tool's
// maximum: NaN, infinite, negative or above it (Read is NaN when the cost
// function panicked). The call was charged Charged, the maximum. It holds
// no content of the call.
type BadCost struct {
	Tool    string  // the tool's name
	CallID  string  // the model's call id, or ""
	Max     float64 // the tool's declared maximum
	Read    float64 // what the cost function returned
	Charged float64 // what the call was charged
}

type layer struct {
	config
	shared *shared           // nil without a Store
	meters map[string]*meter // by costed tool; read-only after New
}

// meter is what one costed tool's calls hold and were charged, in units,
// for package state.
type meter struct{ held, settled atomic.Int64 }

// publish reports l's meters to package state, per tool and currency.
func publish(l *layer, emit state.Emit) {
	for tool, m := range l.meters {
		emit(state.SpendReserved, tool, l.currency, amount(m.held.Load()))
		emit(state.SpendSettled, tool, l.currency, amount(m.settled.Load()))
	}
}

func (l *layer) call(ctx context.Context, next toolmw.Tool, args json.RawMessage) (toolmw.Result, error) {
	call, _ := toolmw.CallFrom(ctx)
	c, costed := l.costs[call.Tool]
	if !costed {
		return next(ctx, args)
	}
	acct, ok := AccountFrom(ctx)
	if !ok {
		return next(ctx, args)
	}
	// A reservation covers one execution: a hedge layer inside does not
	// start a second one beside it.
	ctx = single.Mark(ctx, "spend")
	if l.shared != nil {
		if run, ok := budget.RunFrom(ctx); ok && run.ID() != "" {
			return l.sharedCall(ctx, run.ID(), acct, call, c, next, args)
		}
	}
	if err := acct.reserve(c.max); err != nil {
		return toolmw.Result{}, err
	}
	return l.run(ctx, acct, nil, call, c, next, args)
}

// run runs next on a reservation of c.max held in acct and settles it to
// what the call cost; st, when not nil, is the call of a named run whose
// spend the Store keeps, and the Store and the replica's account of the
// run are settled as well.
func (l *layer) run(ctx context.Context, acct *Account, st *stored, call toolmw.Call, c cost,
	next toolmw.Tool, args json.RawMessage) (res toolmw.Result, err error) {
	m := l.meters[call.Tool]
	m.held.Add(c.max)
	returned := false
	defer func() {
		if !returned { // a panic or runtime.Goexit: the tool ran, at its maximum
			l.settle(ctx, acct, st, c.max, c.max)
			m.held.Add(-c.max)
			m.settled.Add(c.max)
		}
	}()
	attempt := call.Attempt
	res, err = next(ctx, args)
	returned = true
	charge, bad, read := c.max, false, 0.0
	switch {
	case err == nil && c.read != nil:
		read = readCost(c.read, res)
		if u, ok := units(read); ok && u <= c.max {
			charge = u
		} else {
			bad = true
		}
	case err != nil && ranNothing(ctx, attempt, err):
		charge = 0
	}
	l.settle(ctx, acct, st, c.max, charge)
	m.held.Add(-c.max)
	m.settled.Add(charge)
	if bad && l.onBadCost != nil {
		l.report(BadCost{Tool: call.Tool, CallID: call.ID, Max: amount(c.max), Read: read, Charged: amount(charge)})
	}
	return res, err
}

// settle ends a call that held held units and cost charge, in acct and,
// when st is not nil, on the replica's account of the run and in the
// Store.
func (l *layer) settle(ctx context.Context, acct *Account, st *stored, held, charge int64) {
	acct.settle(held, charge)
	if st != nil {
		st.local.settle(held, charge)
		l.shared.settle(ctx, *st, charge)
	}
}

// readCost calls costOf, reading a panic as NaN.
func readCost(costOf func(toolmw.Result) float64, res toolmw.Result) (v float64) {
	v = math.NaN()
	defer func() { _ = recover() }()
	return costOf(res)
}

func (l *layer) report(b BadCost) {
	defer func() { _ = recover() }()
	l.onBadCost(b)
}

// ranNothing reports whether a call that started at attempt and ended in
// err never started the tool, so it costs nothing: taxonomy.EffectOf says
// so of err (a breaker, a rate limit or a full bulkhead, a budget or a
// limit, a permission or approval decision, arguments that did not decode,
// a guardrail that blocked the arguments, a call the timeout layer did not
// start; an error a retry layer made after its attempts is as its last
// attempt's), and the call made one attempt: a retry layer inside this one
// (a stack that puts spend outside retry) made attempts that may each have
// run. Any other failure — a transient one included: a supplier may bill a
// request it failed; a timeout, a reset or a cancellation, whose outcome
// is unknown — is charged the tool's (maximum) cost.
func ranNothing(ctx context.Context, attempt int, err error) bool {
	if taxonomy.EffectOf(err) != taxonomy.EffectNotStarted {
		return false
	}
	call, _ := toolmw.CallFrom(ctx)
	return call.Attempt == attempt
}
