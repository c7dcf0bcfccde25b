package redisstate

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/store"
)

// luaCount is the Lua that reads what the scripts of run counts and spend
// keep. count(v) parses a stored count or amount: absent (false) is 0; a
// decimal integer from 0 to 2^53-1, without a sign, a leading zero, a
// space, a point or an exponent, is itself; anything else — garbage, a
// negative or larger number, what a hostile or broken writer left — is
// nil: corrupt. A number below 2^53 is exact in Lua's doubles. hashOK()
// reports whether KEYS[1] is a hash or absent; a key of another type is
// corrupt too (reading it would fail as WRONGTYPE, which the layers take
// for an outage and fail open on).
const luaCount = `
local function count(v)
  if not v then return 0 end
  if string.len(v) > 16 or not string.match(v, '^%d+$') or (string.len(v) > 1 and string.sub(v, 1, 1) == '0') then
    return nil
  end
  local n = tonumber(v)
  if n > 9007199254740991 then return nil end
  return n
end
local function hashOK()
  local t = redis.call('TYPE', KEYS[1]).ok
  return t == 'hash' or t == 'none'
end
`

// callTake admits one call of a tool in a run, once per operation id: an
// op already admitted (or recorded) is admitted again without counting it
// again, and an op released or cancelled is not admitted. A count that
// does not parse admits nothing: the call fails closed.
//
// KEYS[1] the run's calls; ARGV the tool's field, the limit, TTL (ms), the
// op's field. Returns 1 if admitted, 0 if not, -1 if the count is corrupt.
var callTake = redis.NewScript(luaCount + `
local r = -1
if hashOK() then
  local used = count(redis.call('HGET', KEYS[1], ARGV[1]))
  local o = redis.call('HGET', KEYS[1], ARGV[4])
  if used and o then
    r = 0
    if o == 't' then r = 1 end
  elseif used and used < tonumber(ARGV[2]) then
    redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
    redis.call('HSET', KEYS[1], ARGV[4], 't')
    r = 1
  elseif used then
    r = 0
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return r
`)

// callRelease gives back the slot an op took, never going below zero, and
// marks the op released; an op that took no slot is marked so too
// (cancelled), so that its Take, should it arrive later, admits nothing.
// A second Release of an op does nothing.
//
// KEYS[1] the run's calls; ARGV the tool's field, TTL (ms), the op's
// field. Returns the calls admitted after it, or -1 if the count is
// corrupt (left as it is).
var callRelease = redis.NewScript(luaCount + `
if not hashOK() then return -1 end
local used = count(redis.call('HGET', KEYS[1], ARGV[1]))
if not used then return -1 end
local o = redis.call('HGET', KEYS[1], ARGV[3])
if o == 't' and used > 0 then
  used = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
end
if o ~= 'r' then
  redis.call('HSET', KEYS[1], ARGV[3], 'r')
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return used
`)

// callRecord counts an op that ran without the Store's admission, unless
// it is counted already (its Take landed, or an earlier Record did), and
// marks it taken: its late Take then counts nothing.
//
// KEYS[1] the run's calls; ARGV the tool's field, TTL (ms), the op's
// field. Returns the calls counted after it, or -1 if the count is corrupt
// (left as it is).
var callRecord = redis.NewScript(luaCount + `
if not hashOK() then return -1 end
local used = count(redis.call('HGET', KEYS[1], ARGV[1]))
if not used then return -1 end
if redis.call('HGET', KEYS[1], ARGV[3]) ~= 't' then
  used = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('HSET', KEYS[1], ARGV[3], 't')
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return used
`)

// errCallsCorrupt: a run's stored call count does not parse.
var errCallsCorrupt = fmt.Errorf("redisstate: a run's call count is not a count: %w", store.ErrCorrupt)

// RunCalls returns the [runlimit.Store] of s: give it to runlimit.WithStore
// in every replica serving runs named with budget.WithID, so that
// runlimit.Once holds once per run across the fleet. A run's calls are the
// Redis hash PREFIX + "calls:" + 32 hex digits of the run id's SHA-256,
// with one field per tool (32 hex digits of the tool name's SHA-256)
// counting its admitted calls, and one field per operation id that took,
// released or recorded a slot ("o" + 32 hex digits of its SHA-256, one
// byte of state), which makes each operation's effect apply once however
// late its answer or how often it is sent; the hash expires after the
// Store's TTL without use, so keep the TTL longer than a run lasts. It
// grows by about 40 bytes per call of a limited tool in the run. Take,
// Release and Record are one round trip each.
//
// A count that does not parse — anything but a decimal integer from 0 to
// 2^53-1 as HINCRBY writes it (garbage, a negative number, a sign, a
// space), or a run's key that is not a hash — is corrupt: Take admits
// nothing and returns an error wrapping store.ErrCorrupt, on which
// the layer refuses the call (fails closed, whatever WithFailClosed says)
// and reports it; Release and Record leave it as it is and return the same
// error. Each Take keeps such a key alive for the TTL, so it stays refused
// while the run goes on. Whoever can write to Redis can still lower a
// count to a well-formed smaller one, or delete it: that is not
// detectable, and the Store must be trusted that far (see
// docs/guarantees.md).
//
// The returned Store is safe for concurrent use.
func (s *Store) RunCalls() runlimit.Store { return runCalls{s} }

type runCalls struct{ s *Store }

// field returns the hash field of a tool: 32 hex digits of its SHA-256.
func (r runCalls) field(tool string) string { return r.s.key("", tool)[len(r.s.prefix):] }

// opField returns the hash field of an operation id: "o" and 32 hex digits
// of its SHA-256.
func (r runCalls) opField(op string) string { return "o" + r.field(op) }

// Take admits one call in one round trip.
func (r runCalls) Take(ctx context.Context, id, tool string, limit int, op string) (bool, error) {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	ok, err := r.s.run(ctx, callTake, []string{r.s.key("calls:", id)},
		r.field(tool), strconv.Itoa(max(limit, 0)), r.s.ttl.Milliseconds(), r.opField(op)).Int64()
	switch {
	case err != nil:
		return false, err
	case ok < 0:
		return false, errCallsCorrupt
	}
	return ok == 1, nil
}

// Release gives back one call, or cancels its Take, in one round trip.
func (r runCalls) Release(ctx context.Context, id, tool, op string) error {
	return r.settle(ctx, callRelease, id, tool, op)
}

// Record counts a call that ran without a Take, in one round trip.
func (r runCalls) Record(ctx context.Context, id, tool, op string) error {
	return r.settle(ctx, callRecord, id, tool, op)
}

func (r runCalls) settle(ctx context.Context, script *redis.Script, id, tool, op string) error {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	used, err := r.s.run(ctx, script, []string{r.s.key("calls:", id)},
		r.field(tool), r.s.ttl.Milliseconds(), r.opField(op)).Int64()
	switch {
	case err != nil:
		return err
	case used < 0:
		return errCallsCorrupt
	}
	return nil
}
