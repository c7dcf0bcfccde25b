package redisstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/store"
)

// spendReserve holds an amount for a call of a run if it fits the limit,
// once per operation id: an op that holds already is admitted again
// without holding more, and an op settled is not admitted. The amounts are
// below 2^53, so Lua's numbers (doubles) keep them exactly; they reach
// redis.call as the strings given, never as Lua numbers, which it would
// format as "%.14g". A spent or held that does not parse (see luaCount)
// holds nothing: the call fails closed.
//
// KEYS[1] the run's spend; ARGV the limit, the amount, TTL (ms), the op's
// field. Returns {spent, held, 1 if held, 0 if not, -1 if the spend is
// corrupt}, held after it.
var spendReserve = redis.NewScript(luaCount + `
local spent, held, ok = 0, 0, -1
if hashOK() then
  spent = count(redis.call('HGET', KEYS[1], 'spent'))
  held = count(redis.call('HGET', KEYS[1], 'held'))
  local o = redis.call('HGET', KEYS[1], ARGV[4])
  if spent and held then
    ok = 0
    if o then
      if o ~= 's' then ok = 1 end
    elseif tonumber(ARGV[2]) <= tonumber(ARGV[1]) - spent - held then
      held = redis.call('HINCRBY', KEYS[1], 'held', ARGV[2])
      redis.call('HSET', KEYS[1], ARGV[4], ARGV[2])
      ok = 1
    end
  else
    spent, held = 0, 0
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {spent, held, ok}
`)

// spendSettle ends a call of a run, once per operation id: what the op
// holds is no longer held, never below zero, spent goes up by what it
// cost, and the op is marked settled — also an op that holds nothing (its
// Reserve never arrived, or is on its way), so that its Reserve, should it
// arrive, holds nothing. A second Settle of an op does nothing. A spent,
// a held or an op's hold that does not parse is left as it is.
//
// KEYS[1] the run's spend; ARGV what the call cost, TTL (ms), the op's
// field. Returns {spent, held} after it, or {-1, -1} if the spend is
// corrupt.
var spendSettle = redis.NewScript(luaCount + `
if not hashOK() then return {-1, -1} end
local spent = count(redis.call('HGET', KEYS[1], 'spent'))
local held = count(redis.call('HGET', KEYS[1], 'held'))
if not spent or not held then return {-1, -1} end
local o = redis.call('HGET', KEYS[1], ARGV[3])
if o ~= 's' then
  local h = 0
  if o then
    h = count(o)
    if not h then return {-1, -1} end
  end
  if held > 0 and h > 0 then
    if h >= held then
      redis.call('HSET', KEYS[1], 'held', '0')
      held = 0
    else
      held = redis.call('HINCRBY', KEYS[1], 'held', '-' .. o)
    end
  end
  if tonumber(ARGV[1]) > 0 then
    spent = redis.call('HINCRBY', KEYS[1], 'spent', ARGV[1])
  end
  redis.call('HSET', KEYS[1], ARGV[3], 's')
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {spent, held}
`)

// errSpendCorrupt: a run's stored spend does not parse.
var errSpendCorrupt = fmt.Errorf("redisstate: a run's spend is not an amount: %w", store.ErrCorrupt)

// maxSpendAmount is the largest amount, in billionths of a unit, that the
// [Store.Spend] port keeps: 2^53-1, about 9,007,199 units. Lua's numbers
// in Redis are doubles, exact up to 2^53.
const maxSpendAmount = 1<<53 - 1

// errSpendAmount: an amount the port cannot keep exactly.
var errSpendAmount = errors.New("redisstate: spend amounts above 2^53-1 billionths (about 9,007,199 units) " +
	"are not supported, nor negative ones")

// Spend returns the [spend.Store] of s: give it to spend.WithStore in every
// replica serving runs named with budget.WithID, so that a run's spend
// limit holds across the fleet. A run's spend is the Redis hash PREFIX +
// "spend:" + 32 hex digits of the run id's SHA-256, with the fields
// "spent" and "held", in billionths of a unit, and one field per operation
// id reserved or settled ("o" + 32 hex digits of its SHA-256: what it
// holds, or "s" once settled), which makes each operation's effect apply
// once however late its answer or how often it is sent; it expires after
// the Store's TTL without use, so keep the TTL longer than a run lasts. It
// grows by about 50 bytes per call of a costed tool in the run. Reserve
// and Settle are one round trip each.
//
// Amounts are bounded, since Lua's numbers in Redis are doubles, exact
// only up to 2^53: a limit, an amount, a hold or a charge above 2^53-1
// billionths (about 9,007,199 units), or a negative one, is an error
// before any round trip, which the spend layer takes as a Store failure
// (it reserves in the call's Account, or refuses with
// spend.WithFailClosed). Keep spend limits below about 9 million units.
//
// A spent or held that does not parse — anything but a decimal integer
// from 0 to 2^53-1 as HINCRBY writes it (garbage, a negative amount, a
// sign, a space, a fraction), or a run's key that is not a hash — is
// corrupt: Reserve holds nothing and returns an error wrapping
// store.ErrCorrupt, on which the layer refuses the call (fails
// closed, whatever WithFailClosed says) and reports it; Settle leaves it
// as it is and returns the same error. Each Reserve keeps such a key alive
// for the TTL, so it stays refused while the run goes on. Whoever can
// write to Redis can still lower the spend to a well-formed smaller
// amount, or delete it: that is not detectable, and the Store must be
// trusted that far (see docs/guarantees.md).
//
// The returned Store is safe for concurrent use.
func (s *Store) Spend() spend.Store { return spendStore{s} }

type spendStore struct{ s *Store }

// amounts reports whether every amount is one the port keeps exactly.
func amounts(a ...int64) bool {
	for _, v := range a {
		if v < 0 || v > maxSpendAmount {
			return false
		}
	}
	return true
}

// opField returns the hash field of an operation id: "o" and 32 hex digits
// of its SHA-256.
func (r spendStore) opField(op string) string { return "o" + r.s.key("", op)[len(r.s.prefix):] }

// Reserve holds an amount in one round trip.
func (r spendStore) Reserve(ctx context.Context, id string, limit, amount int64, op string) (spent, held int64, ok bool, err error) {
	if !amounts(limit, amount) {
		return 0, 0, false, errSpendAmount
	}
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	v, err := r.s.run(ctx, spendReserve, []string{r.s.key("spend:", id)},
		strconv.FormatInt(limit, 10), strconv.FormatInt(amount, 10), r.s.ttl.Milliseconds(), r.opField(op)).Result()
	if err != nil {
		return 0, 0, false, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 3 {
		return 0, 0, false, fmt.Errorf("redisstate: unexpected reply %T", v)
	}
	spent, ok1 := a[0].(int64)
	held, ok2 := a[1].(int64)
	admitted, ok3 := a[2].(int64)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, false, fmt.Errorf("redisstate: unexpected reply %T, %T, %T", a[0], a[1], a[2])
	}
	if admitted < 0 {
		return 0, 0, false, errSpendCorrupt
	}
	return spent, held, admitted == 1, nil
}

// Settle ends a call in one round trip.
func (r spendStore) Settle(ctx context.Context, id, op string, charge int64) error {
	if !amounts(charge) {
		return errSpendAmount
	}
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	spent, _, err := ints(r.s.run(ctx, spendSettle, []string{r.s.key("spend:", id)},
		strconv.FormatInt(charge, 10), r.s.ttl.Milliseconds(), r.opField(op)).Result())
	if err == nil && spent < 0 {
		return errSpendCorrupt
	}
	return err
}
