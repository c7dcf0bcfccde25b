package spend

import (
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/runshare"
	"github.com/toolmw/toolmw/taxonomy"
)

// Option declares the cost of one tool, or configures the layer.
type Option func(*config)

type config struct {
	costs     map[string]cost
	currency  string
	onBadCost func(BadCost)
	store     runshare.Config[Store]
	err       error
}

func (c *config) reject(format string, args ...any) {
	if c.err == nil {
		c.err = taxonomy.New(taxonomy.KindDefinitionInvalid, taxonomy.CodeOptionInvalid,
			fmt.Sprintf("spend: "+format, args...))
	}
}

func (c *config) declare(what, tool string, amount float64, read func(toolmw.Result) float64) {
	u, ok := units(amount)
	switch {
	case !toolmw.ValidName(tool):
		c.reject("%s(%q): not a tool name", what, tool)
	case !ok:
		c.reject("%s(%q, %v): an amount is a number from 0 to %g", what, tool, amount, MaxAmount)
	case what == "Metered" && read == nil:
		c.reject("Metered(%q): the cost function is nil", tool)
	case c.has(tool):
		c.reject("%s(%q): the tool already has a cost", what, tool)
	default:
		if c.costs == nil {
			c.costs = map[string]cost{}
		}
		c.costs[tool] = cost{max: u, read: read}
	}
}

func (c *config) has(tool string) bool {
	_, ok := c.costs[tool]
	return ok
}

// WithOnBadCost sets a function told of every metered cost the layer could
// not take as read (see [Metered]). It runs on the call's goroutine after
// the charge, outside the layer's locks; a panic in it is dropped. nil
// means none (the default).
func WithOnBadCost(f func(BadCost)) Option {
	return func(c *config) { c.onBadCost = f }
}

// MaxCurrencyLen is the longest currency [WithCurrency] takes, in bytes.
const MaxCurrencyLen = 16

// WithCurrency names the unit the layer's costs are counted in — an ISO
// 4217 code such as "USD" or "EUR", or the application's own ("tokens",
// "credits") — for its state metrics only: the amounts the layer holds and
// charges are published per tool and currency (package state), so two
// layers that count in different currencies report apart. The layer
// converts nothing: a run's limit (ContextWithLimit) is in whatever unit
// the layers charging it count in. A currency is 1 to [MaxCurrencyLen]
// ASCII letters, digits, '_', '-' or '.'; any other is invalid. Without
// it the amounts are published without a currency.
func WithCurrency(code string) Option {
	return func(c *config) {
		if !validCurrency(code) {
			c.reject("WithCurrency(%q): a currency is 1 to %d ASCII letters, digits, '_', '-' or '.'", code, MaxCurrencyLen)
			return
		}
		c.currency = code
	}
}

func validCurrency(s string) bool {
	if s == "" || len(s) > MaxCurrencyLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// Validate reports the first invalid option value as a
// tool-definition-invalid/option_invalid error, or nil: the error
// toolmw.Wrap reports for the middleware [New] makes of them. It is safe
// for concurrent use.
func Validate(opts ...Option) error { return newConfig(opts).err }
