package redisstate

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/budget"
)

// bucket applies a budget.TokenOp to one retry bucket.
//
// KEYS[1] the bucket; ARGV capacity, add, take, withdraw (thousandths of
// a token), TTL (ms). Returns {balance, 1 if withdrawn else 0}.
var bucket = redis.NewScript(`
local cap = tonumber(ARGV[1])
local b = tonumber(redis.call('GET', KEYS[1])) or cap
if b > cap then b = cap end
b = math.min(b + tonumber(ARGV[2]), cap)
b = math.max(b - tonumber(ARGV[3]), 0)
local w = tonumber(ARGV[4])
local ok = 0
if w > 0 and b >= w then
  b = b - w
  ok = 1
end
redis.call('SET', KEYS[1], string.format('%d', b), 'PX', ARGV[5])
return {b, ok}
`)

// RetryBudget returns the [budget.TokenStore] of the retry bucket called
// name: give it to budget.WithTokenStore, with the same name in every
// replica that shares the bucket (a dependency's name, say). The bucket is
// the Redis key PREFIX + "rb:" + 32 hex digits of name's SHA-256, holding
// the balance in thousandths of a token; it expires after the Store's TTL
// without use, and a bucket that is missing is full.
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
	b, ok, err := ints(bucket.Run(ctx, r.s.client, []string{r.key},
		max(op.Capacity, 0), max(op.Add, 0), max(op.Take, 0), max(op.Withdraw, 0), r.s.ttl.Milliseconds()).Result())
	if err != nil {
		return budget.TokenBalance{}, err
	}
	return budget.TokenBalance{Balance: b, Withdrawn: ok == 1}, nil
}

// runTake takes one attempt of a tool in a run.
//
// KEYS[1] the run; ARGV the tool's field, the cap, TTL (ms). Returns
// {used after, 1 if taken else 0}.
var runTake = redis.NewScript(`
local used = tonumber(redis.call('HGET', KEYS[1], ARGV[1])) or 0
local ok = 0
if used < tonumber(ARGV[2]) then
  used = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  ok = 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {used, ok}
`)

// Runs returns the [budget.RunStore] of s: give it to budget.WithRunStore
// in every replica serving a run named with budget.WithID. A run is the
// Redis hash PREFIX + "run:" + 32 hex digits of the run id's SHA-256, with
// one field per tool (32 hex digits of the tool name's SHA-256) counting its
// attempts; it expires after the Store's TTL without use.
//
// The returned RunStore is safe for concurrent use.
func (s *Store) Runs() budget.RunStore { return runs{s} }

type runs struct{ s *Store }

// Take takes one attempt in one round trip.
func (r runs) Take(ctx context.Context, id, tool string, limit int) (int, bool, error) {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	field := r.s.key("", tool)[len(r.s.prefix):]
	used, ok, err := ints(runTake.Run(ctx, r.s.client, []string{r.s.key("run:", id)},
		field, strconv.Itoa(max(limit, 0)), r.s.ttl.Milliseconds()).Result())
	if err != nil {
		return 0, false, err
	}
	return int(used), ok == 1, nil
}
