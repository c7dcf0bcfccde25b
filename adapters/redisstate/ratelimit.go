package redisstate

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/store"
)

// gcra is the rate limit of one key by GCRA (the generic cell rate
// algorithm), in one script so the decision is atomic. The key holds the
// theoretical arrival time (TAT) in microseconds of Redis's clock, so
// replicas whose clocks disagree still agree. A call is admitted when the
// TAT after it, less burst intervals, is not in the future; when it is, the
// call is admitted after that wait if the wait is within its max wait (the
// slot is reserved), and refused otherwise with that wait. The key expires
// when the TAT passes: a missing key is a full bucket. A stored TAT is read
// strictly (decimal digits, with a fraction when the interval has one): a
// value that does not parse — what a broken or hostile writer left — is an
// error reply (errRateCorrupt, which wraps store.ErrCorrupt), never a full
// bucket; the layer reports it and decides on its local limiter, as when
// Redis fails.
//
// KEYS[1] the limit's key; ARGV interval (µs), burst, max wait (µs).
// Returns {1, wait µs} admitted after wait, {0, wait µs} refused.
var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local maxwait = tonumber(ARGV[3])
local raw = redis.call('GET', KEYS[1])
local tat = now
if raw then
  if string.len(raw) > 32 or not (string.match(raw, '^%d+$') or string.match(raw, '^%d+%.%d+$')) then
    return redis.error_reply('TOOLMW_CORRUPT rate limit state')
  end
  tat = tonumber(raw)
end
if tat < now then tat = now end
local newtat = tat + interval
local wait = newtat - burst * interval - now
if wait > maxwait then
  return {0, math.ceil(wait)}
end
redis.call('SET', KEYS[1], string.format('%.17g', newtat), 'PX', math.ceil((newtat - now) / 1000) + 1)
if wait < 0 then wait = 0 end
return {1, math.ceil(wait)}
`)

// RateLimits returns the [ratelimit.Store] of s: give it to
// ratelimit.WithStore. Each key of the layer (a tool's name, or what
// ratelimit.WithKey returned) is one Redis key, PREFIX + "rl:" + 32 hex
// digits of the key's SHA-256, holding the limit's GCRA state; it expires
// once its bucket is full again. Every admission is one round trip (the
// first after Redis restarts is two: the script is sent again).
//
// The returned Store is safe for concurrent use.
func (s *Store) RateLimits() ratelimit.Store { return rateLimits{s} }

type rateLimits struct{ s *Store }

// Admit decides one call by GCRA on Redis's clock.
func (r rateLimits) Admit(ctx context.Context, req ratelimit.Request) (ratelimit.Decision, error) {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	ok, wait, err := ints(r.s.run(ctx, gcra, []string{r.s.key("rl:", req.Key)},
		micros(req.Interval), max(req.Burst, 1), micros(req.MaxWait)).Result())
	if err != nil {
		return ratelimit.Decision{}, corruptReply(err, errRateCorrupt)
	}
	return ratelimit.Decision{Allowed: ok == 1, Wait: time.Duration(min(wait, math.MaxInt64/1000)) * time.Microsecond}, nil
}

// errRateCorrupt: a rate limit's stored state does not parse.
var errRateCorrupt = fmt.Errorf("redisstate: a rate limit's stored state is corrupt: %w", store.ErrCorrupt)

// micros formats d in microseconds, fractions kept (an interval may be
// shorter than one).
func micros(d time.Duration) string {
	return strconv.FormatFloat(float64(max(d, 0))/1e3, 'g', -1, 64)
}
