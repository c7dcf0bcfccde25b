package redisstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/store"
)

// The breaker's state of one name is one hash, so that each operation
// touches one key (Redis Cluster places it on one node):
//
//	s   state: 0 closed, 1 half-open, 2 open (a missing key is closed, no failure)
//	f   consecutive failures while closed
//	u   when the open period ends, µs of Redis's clock
//	p   successful probes in this half-open period
//	l   the probe lease's token
//	le  when the lease ends, µs of Redis's clock
//
// Every script reads Redis's clock (TIME), so replicas whose clocks
// disagree agree on when an open period and a lease end, and returns
// {state, failures, µs left of the open period, probing, granted}.
//
// Stored fields are read strictly: a number field holds a decimal integer
// below 2^53 (no sign, space, leading zero, point or exponent), s is 0, 1
// or 2, and the key is a hash or absent. Anything else — what a broken or
// hostile writer left — is an error reply (errBreakerCorrupt, which wraps
// store.ErrCorrupt), never a closed breaker with no failure: the layer
// reports it and decides on its local breaker, as when Redis fails. The
// key is left as found, for the operator.
const breakerRead = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'hash' and kind ~= 'none' then return redis.error_reply('TOOLMW_CORRUPT breaker state') end
local function field(v)
  if not v then return 0 end
  if string.len(v) > 16 or not string.match(v, '^%d+$') or (string.len(v) > 1 and string.sub(v, 1, 1) == '0') then return nil end
  local n = tonumber(v)
  if n > 9007199254740991 then return nil end
  return n
end
local h = redis.call('HMGET', KEYS[1], 's', 'f', 'u', 'p', 'l', 'le')
local s, f, u, p, le = field(h[1]), field(h[2]), field(h[3]), field(h[4]), field(h[6])
if not (s and f and u and p and le) or s > 2 then return redis.error_reply('TOOLMW_CORRUPT breaker state') end
local held = s == 1 and h[5] and le > now
local function state(granted)
  local left, probing = 0, 0
  if s == 2 then left = u - now end
  if held then probing = 1 end
  return {s, f, left, probing, granted}
end
local function num(x) return string.format('%.0f', x) end
`

// breakerLoad: KEYS[1] the breaker's key.
var breakerLoad = redis.NewScript(breakerRead + `
return state(0)
`)

// breakerAcquire gives the probe lease when the open period is over and
// no lease is held. KEYS[1] the key; ARGV the token, the lease's TTL (µs),
// the key's TTL (ms).
var breakerAcquire = redis.NewScript(breakerRead + `
if s == 0 or (s == 2 and now < u) or held then
  return state(0)
end
if s == 2 then p = 0 end
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 's', 1, 'p', p, 'l', ARGV[1], 'le', num(now + ttl))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + math.ceil(ttl / 1000))
s, held = 1, true
return state(1)
`)

// breakerReport records an outcome. KEYS[1] the key; ARGV the outcome
// (0 success, 1 fault, 2 neutral), the probe's token or "", trip (0/1),
// the failures that open, the open period (µs), the probes that close, the
// key's TTL (ms).
var breakerReport = redis.NewScript(breakerRead + `
local out = tonumber(ARGV[1])
local token = ARGV[2]
local openFor = tonumber(ARGV[5])
local keyTTL = tonumber(ARGV[7])
local function open()
  s, f, u, p, held = 2, 0, now + openFor, 0, false
  redis.call('HSET', KEYS[1], 's', 2, 'f', 0, 'u', num(u), 'p', 0)
  redis.call('HDEL', KEYS[1], 'l', 'le')
  redis.call('PEXPIRE', KEYS[1], keyTTL + math.ceil(openFor / 1000))
  return state(0)
end
local function close()
  redis.call('DEL', KEYS[1])
  s, f, p, held = 0, 0, 0, false
  return state(0)
end
if token ~= '' then
  if s ~= 1 or h[5] ~= token then return state(0) end
  if out == 1 then return open() end
  if out == 0 then
    p = p + 1
    if p >= tonumber(ARGV[6]) then return close() end
  end
  held = false
  redis.call('HSET', KEYS[1], 'p', p)
  redis.call('HDEL', KEYS[1], 'l', 'le')
  redis.call('PEXPIRE', KEYS[1], keyTTL)
  return state(0)
end
if s ~= 0 then return state(0) end
if out == 0 and f > 0 then return close() end
if out ~= 1 then return state(0) end
f = f + 1
if ARGV[3] == '1' and f >= tonumber(ARGV[4]) then return open() end
redis.call('HSET', KEYS[1], 'f', f)
redis.call('PEXPIRE', KEYS[1], keyTTL)
return state(0)
`)

// Breakers returns the [breaker.Store] of s: give it to breaker.WithStore.
// Each breaker name (a tool's name, what breaker.WithKey returned, or the
// name given to breaker.NewBreaker) is one Redis hash, PREFIX + "cb:" + 32
// hex digits of the name's SHA-256, holding the shared state; a closed
// breaker with no failure has no key, and every key expires after the TTL
// ([WithTTL]) past its open period or its last write. Every operation is
// one Lua script and one round trip (two the first time after Redis
// restarts, when the script is sent again). Open periods and probe leases
// run on Redis's clock.
//
// The returned Store is safe for concurrent use.
func (s *Store) Breakers() breaker.Store { return breakers{s} }

type breakers struct{ s *Store }

// Load implements breaker.Store.
func (b breakers) Load(ctx context.Context, key string) (breaker.Snapshot, error) {
	ctx, cancel := b.s.bound(ctx)
	defer cancel()
	snap, _, err := snapshot(b.s.run(ctx, breakerLoad, []string{b.s.key("cb:", key)}).Result())
	return snap, err
}

// Acquire implements breaker.Store.
func (b breakers) Acquire(ctx context.Context, key string, l breaker.Lease) (breaker.Snapshot, bool, error) {
	ctx, cancel := b.s.bound(ctx)
	defer cancel()
	return snapshot(b.s.run(ctx, breakerAcquire, []string{b.s.key("cb:", key)},
		l.Token, microsInt(max(l.TTL, time.Millisecond)), b.s.ttl.Milliseconds()).Result())
}

// Report implements breaker.Store.
func (b breakers) Report(ctx context.Context, key string, r breaker.Report) (breaker.Snapshot, error) {
	ctx, cancel := b.s.bound(ctx)
	defer cancel()
	trip := "0"
	if r.Trip {
		trip = "1"
	}
	snap, _, err := snapshot(b.s.run(ctx, breakerReport, []string{b.s.key("cb:", key)},
		int(r.Outcome), r.Probe, trip, max(r.Failures, 1), microsInt(r.OpenFor), max(r.Probes, 1),
		b.s.ttl.Milliseconds()).Result())
	return snap, err
}

// microsInt formats d in whole microseconds, at least one.
func microsInt(d time.Duration) string {
	return strconv.FormatInt(max(d.Microseconds(), 1), 10)
}

// errBreakerCorrupt: a breaker's stored state does not parse.
var errBreakerCorrupt = fmt.Errorf("redisstate: a breaker's stored state is corrupt: %w", store.ErrCorrupt)

// snapshot reads the five integers a breaker script returns.
func snapshot(v any, err error) (breaker.Snapshot, bool, error) {
	if err != nil {
		return breaker.Snapshot{}, false, corruptReply(err, errBreakerCorrupt)
	}
	a, ok := v.([]any)
	if !ok || len(a) != 5 {
		return breaker.Snapshot{}, false, fmt.Errorf("redisstate: unexpected reply %T", v)
	}
	var n [5]int64
	for i, x := range a {
		if n[i], ok = x.(int64); !ok {
			return breaker.Snapshot{}, false, fmt.Errorf("redisstate: unexpected reply %T", x)
		}
	}
	st := breaker.StateClosed
	switch n[0] {
	case 1:
		st = breaker.StateHalfOpen
	case 2:
		st = breaker.StateOpen
	}
	return breaker.Snapshot{
		State:    st,
		Failures: uint32(min(max(n[1], 0), 1<<32-1)),
		OpenFor:  time.Duration(min(n[2], int64(1<<62)/1000)) * time.Microsecond,
		Probing:  n[3] == 1,
	}, n[4] == 1, nil
}

// corruptReply returns corrupt when err is the error reply a script gives
// for stored state that does not parse ("TOOLMW_CORRUPT …"), and err
// otherwise.
func corruptReply(err, corrupt error) error {
	var re redis.Error
	if errors.As(err, &re) && strings.HasPrefix(re.Error(), "TOOLMW_CORRUPT") {
		return corrupt
	}
	return err
}
