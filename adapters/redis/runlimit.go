package redisstate

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware/runlimit"
)

// callTake admits one call of a tool in a run.
//
// KEYS[1] the run's calls; ARGV the tool's field, the limit, TTL (ms).
// Returns 1 if admitted else 0.
var callTake = redis.NewScript(`
local used = tonumber(redis.call('HGET', KEYS[1], ARGV[1])) or 0
local ok = 0
if used < tonumber(ARGV[2]) then
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  ok = 1
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return ok
`)

// callRelease gives back one admitted call of a tool in a run, never going
// below zero.
//
// KEYS[1] the run's calls; ARGV the tool's field, TTL (ms). Returns the
// calls admitted after it.
var callRelease = redis.NewScript(`
local used = tonumber(redis.call('HGET', KEYS[1], ARGV[1])) or 0
if used > 0 then
  used = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return used
`)

// RunCalls returns the [runlimit.Store] of s: give it to runlimit.WithStore
// in every replica serving runs named with budget.WithID, so that
// runlimit.Once holds once per run across the fleet. A run's calls are the
// Redis hash PREFIX + "calls:" + 32 hex digits of the run id's SHA-256,
// with one field per tool (32 hex digits of the tool name's SHA-256)
// counting its admitted calls; it expires after the Store's TTL without
// use, so keep the TTL longer than a run lasts. Take and Release are one
// round trip each.
//
// The returned Store is safe for concurrent use.
func (s *Store) RunCalls() runlimit.Store { return runCalls{s} }

type runCalls struct{ s *Store }

// field returns the hash field of a tool: 32 hex digits of its SHA-256.
func (r runCalls) field(tool string) string { return r.s.key("", tool)[len(r.s.prefix):] }

// Take admits one call in one round trip.
func (r runCalls) Take(ctx context.Context, id, tool string, limit int) (bool, error) {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	ok, err := callTake.Run(ctx, r.s.client, []string{r.s.key("calls:", id)},
		r.field(tool), strconv.Itoa(max(limit, 0)), r.s.ttl.Milliseconds()).Int64()
	if err != nil {
		return false, err
	}
	return ok == 1, nil
}

// Release gives back one call in one round trip.
func (r runCalls) Release(ctx context.Context, id, tool string) error {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	return callRelease.Run(ctx, r.s.client, []string{r.s.key("calls:", id)},
		r.field(tool), r.s.ttl.Milliseconds()).Err()
}
