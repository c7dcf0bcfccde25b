package spend

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolmw/toolmw/taxonomy"
)

// Account is one run's spend: its limit, what its finished calls cost, and
// what its calls in flight may still cost. [ContextWithLimit] makes one; the
// layer charges it. An Account is safe for concurrent use, and the limit
// holds exactly: spent plus held never exceeds it.
type Account struct {
	limit int64 // units; read-only
	valid bool  // the limit given was an amount

	mu    sync.Mutex
	spent int64 // what finished calls cost
	held  int64 // what calls in flight may cost: their reservations
}

type accountKey struct{}

// ContextWithLimit returns a copy of ctx carrying a new [Account] with a spend
// limit of limit, in the unit the tools' costs use. Every call made with
// the returned context, or one derived from it, draws on that account: set
// it once, on the run's context. The limit is rounded down to the
// billionth of a unit (see [MaxAmount]). A limit that is not an amount from 0 to
// [MaxAmount] (NaN, an infinity, a negative number) fails closed: the
// account's limit is 0, and every call with a cost above 0 is refused with
// a message that says why; [ValidateLimit] reports such a limit.
func ContextWithLimit(ctx context.Context, limit float64) context.Context {
	u, ok := limitUnits(limit)
	return context.WithValue(ctx, accountKey{}, &Account{limit: u, valid: ok})
}

// ValidateLimit reports whether limit can be a run's spend limit, as a
// tool-definition-invalid/option_invalid error, or nil.
func ValidateLimit(limit float64) error {
	if _, ok := limitUnits(limit); !ok {
		return taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("spend: ContextWithLimit(%v): a limit is a number from 0 to %g", limit, MaxAmount))
	}
	return nil
}

// AccountFrom returns the account carried by ctx, and whether there is one.
func AccountFrom(ctx context.Context) (*Account, bool) {
	a, ok := ctx.Value(accountKey{}).(*Account)
	return a, ok
}

// Limit returns the run's spend limit.
func (a *Account) Limit() float64 { return amount(a.limit) }

// Spent returns what the run's finished calls cost.
func (a *Account) Spent() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return amount(a.spent)
}

// Held returns what the run's calls in flight may still cost: the sum of
// their reservations.
func (a *Account) Held() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return amount(a.held)
}

// Left returns what a new call may cost: the limit less what is spent and
// held.
func (a *Account) Left() float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return amount(a.limit - a.spent - a.held)
}

// reserve holds u units for a call, or returns the budget-exceeded error
// when they would take the run past its limit.
func (a *Account) reserve(u int64) error {
	a.mu.Lock()
	taken := a.spent + a.held
	if taken+u <= a.limit {
		a.held += u
		a.mu.Unlock()
		return nil
	}
	a.mu.Unlock()
	return a.refusal(u, taken)
}

// refusal returns the budget-exceeded error of a call that may cost u units
// and does not fit, when the run's calls took taken units of its limit
// (spent and held).
func (a *Account) refusal(u, taken int64) error {
	taken = min(max(taken, 0), a.limit)
	msg := fmt.Sprintf("this call may cost up to %g, and the run has %g of its spend limit left; nothing ran",
		amount(u), amount(a.limit-taken))
	if !a.valid {
		msg = "the run's spend limit is not a valid amount, so no call that costs may run; nothing ran"
	}
	return taxonomy.New(taxonomy.KindBudgetExceeded, taxonomy.CodeSpendLimit, msg).
		WithSpend(amount(a.limit), amount(taken))
}

// add holds u units for a call the Store admitted, without checking the
// limit: the account then holds what this replica's calls may spend
// through the Store, so that during an outage its own limit counts them.
func (a *Account) add(u int64) {
	a.mu.Lock()
	a.held += u
	a.mu.Unlock()
}

// settle ends a call that reserved held units and cost charge (≤ held).
func (a *Account) settle(held, charge int64) {
	a.mu.Lock()
	a.held -= held
	a.spent += charge
	a.mu.Unlock()
}
