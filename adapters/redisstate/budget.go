package redisstate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/store"
)

// bucket applies a budget.TokenOp to one retry bucket. A balance that
// does not parse (see luaCount; a key of another type too) reads as empty,
// so it lends no retry, and the balance the op leaves is written over it.
//
// KEYS[1] the bucket; ARGV capacity, add, take, withdraw (thousandths of
// a token), TTL (ms). Returns {balance, 1 if withdrawn else 0, 1 if the
// stored balance was corrupt else 0}.
var bucket = redis.NewScript(luaCount + `
local cap = tonumber(ARGV[1])
local t = redis.call('TYPE', KEYS[1]).ok
local b, corrupt = cap, 0
if t == 'string' then
  b = count(redis.call('GET', KEYS[1]))
elseif t ~= 'none' then
  b = nil
end
if not b then
  b, corrupt = 0, 1
end
if b > cap then b = cap end
b = math.min(b + tonumber(ARGV[2]), cap)
b = math.max(b - tonumber(ARGV[3]), 0)
local w = tonumber(ARGV[4])
local ok = 0
if w > 0 and b >= w and corrupt == 0 then
  b = b - w
  ok = 1
end
redis.call('SET', KEYS[1], string.format('%d', b), 'PX', ARGV[5])
return {b, ok, corrupt}
`)

// RetryBudget returns the [budget.TokenStore] of the retry bucket called
// name: give it to budget.WithTokenStore, with the same name in every
// replica that shares the bucket (a dependency's name, say). The bucket is
// the Redis key PREFIX + "rb:" + 32 hex digits of name's SHA-256, holding
// the balance in thousandths of a token; it expires after the Store's TTL
// without use, and a bucket that is missing is full. A balance that does
// not parse (garbage, a negative number; a key of another type) reads as
// empty — it lends no retry on that op — and the balance the op leaves is
// written over it; Apply then returns that balance with an error wrapping
// store.ErrCorrupt, which the budget reports and otherwise takes as
// the store's answer.
//
// The returned TokenStore is safe for concurrent use.
func (s *Store) RetryBudget(name string) budget.TokenStore {
	return retryBudget{s: s, key: s.key("rb:", name)}
}

type retryBudget struct {
	s   *Store
	key string
}

// Apply applies op in one round trip.
func (r retryBudget) Apply(ctx context.Context, op budget.TokenOp) (budget.TokenBalance, error) {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	v, err := r.s.run(ctx, bucket, []string{r.key},
		max(op.Capacity, 0), max(op.Add, 0), max(op.Take, 0), max(op.Withdraw, 0), r.s.ttl.Milliseconds()).Result()
	if err != nil {
		return budget.TokenBalance{}, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 3 {
		return budget.TokenBalance{}, fmt.Errorf("redisstate: unexpected reply %T", v)
	}
	b, ok1 := a[0].(int64)
	w, ok2 := a[1].(int64)
	corrupt, ok3 := a[2].(int64)
	if !ok1 || !ok2 || !ok3 {
		return budget.TokenBalance{}, fmt.Errorf("redisstate: unexpected reply %T, %T, %T", a[0], a[1], a[2])
	}
	bal := budget.TokenBalance{Balance: b, Withdrawn: w == 1}
	if corrupt == 1 {
		return bal, errBucketCorrupt
	}
	return bal, nil
}

// errBucketCorrupt: a retry bucket's stored balance did not parse; it read
// as empty and was written over.
var errBucketCorrupt = fmt.Errorf("redisstate: a retry bucket's balance was not a balance (read as empty, rewritten): %w",
	store.ErrCorrupt)

// runTake takes one attempt of a tool in a run. A count that does not
// parse (see luaCount) takes nothing: the attempt is refused.
//
// KEYS[1] the run; ARGV the tool's field, the cap, TTL (ms). Returns
// {used after, 1 if taken, 0 if not, -1 if the count is corrupt}.
var runTake = redis.NewScript(luaCount + `
local used, ok = 0, -1
if hashOK() then
  used = count(redis.call('HGET', KEYS[1], ARGV[1]))
  if used and used < tonumber(ARGV[2]) then
    used = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
    ok = 1
  elseif used then
    ok = 0
  else
    used = 0
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {used, ok}
`)

// errRunCorrupt: a run's stored attempt count does not parse.
var errRunCorrupt = fmt.Errorf("redisstate: a run's attempt count is not a count: %w", store.ErrCorrupt)

// Runs returns the [budget.RunStore] of s: give it to budget.WithRunStore
// in every replica serving a run named with budget.WithID. A run is the
// Redis hash PREFIX + "run:" + 32 hex digits of the run id's SHA-256, with
// one field per tool (32 hex digits of the tool name's SHA-256) counting its
// attempts; it expires after the Store's TTL without use. A count that does
// not parse (garbage, a negative number; a key of another type) takes
// nothing: Take returns the cap as used, not taken, with an error wrapping
// store.ErrCorrupt, and the budget refuses the attempt (fails closed)
// and reports it.
//
// The returned RunStore is safe for concurrent use.
func (s *Store) Runs() budget.RunStore { return runs{s} }

type runs struct{ s *Store }

// Take takes one attempt in one round trip.
func (r runs) Take(ctx context.Context, id, tool string, limit int) (int, bool, error) {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	field := r.s.key("", tool)[len(r.s.prefix):]
	used, ok, err := ints(r.s.run(ctx, runTake, []string{r.s.key("run:", id)},
		field, strconv.Itoa(max(limit, 0)), r.s.ttl.Milliseconds()).Result())
	switch {
	case err != nil:
		return 0, false, err
	case ok < 0:
		return max(limit, 0), false, errRunCorrupt
	}
	return int(used), ok == 1, nil
}
