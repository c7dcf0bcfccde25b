package redisstate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/store"
)

// resultSet keeps a result at KEYS[1], a hash of two fields: m, when the
// result was made (unix milliseconds, a decimal integer), and v, its
// encoding; unless a result made later is kept there. What else is at
// the key — another type, a hash of other fields, an m that does not
// parse as Get parses it — is replaced. A number of at most 16 digits is
// exact in Lua's doubles.
//
// ARGV: made (ms), the value, the time to live (ms). Returns 1 when it
// wrote, 0 when a newer result stays.
var resultSet = redis.NewScript(`
local function millis(m)
  if not m then return nil end
  local d = m
  if string.sub(d, 1, 1) == '-' then d = string.sub(d, 2) end
  if string.len(d) < 1 or string.len(d) > 16 or not string.match(d, '^%d+$') or (string.len(d) > 1 and string.sub(d, 1, 1) == '0') then
    return nil
  end
  return tonumber(m)
end
if redis.call('TYPE', KEYS[1]).ok == 'hash' then
  local m = millis(redis.call('HGET', KEYS[1], 'm'))
  if m and m > tonumber(ARGV[1]) then
    return 0
  end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'm', ARGV[1], 'v', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// errResultCorrupt: a result's stored state does not parse.
var errResultCorrupt = fmt.Errorf("redisstate: a kept result's stored state is corrupt: %w", store.ErrCorrupt)

// Results returns the Store's store.Results: tools' results kept by the
// cache layer (cache.WithStore) and the fallback's last good results
// (fallback.WithStore), shared by every replica on the same Redis with
// the same prefix, and by the two layers, which key a result alike.
//
// A result is a hash at the prefix, "res:" and 32 hex digits of the
// SHA-256 of its key: field m, when it was made (unix milliseconds), and
// field v, its encoding, at most store.MaxResultBytes. Set is one Lua
// script on that one key (it keeps a result made later, replaces anything
// else, and sets the time to live); Get is one HMGET. Each is one round
// trip on one key, so Redis Cluster serves them too. A key of another
// type, a hash missing one of the fields, an m that is not a decimal
// integer of at most 16 digits, or a v over the bound is corrupt: Get
// returns an error wrapping store.ErrCorrupt, and the next Set replaces
// it.
//
// Results are a cache's: Redis may evict them (an allkeys-* maxmemory
// policy suits them), and they need no persistence. The layers bound each
// operation (store.WithTimeout); without a deadline the Store's timeout
// applies. It is safe for concurrent use.
func (s *Store) Results() store.Results { return results{s} }

type results struct{ s *Store }

// Get returns the value kept under key and when it was made, or an error
// matching store.ErrNotFound.
func (r results) Get(ctx context.Context, key string) ([]byte, time.Time, error) {
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	k := r.s.key("res:", key)
	var vals []any
	err := r.s.do(ctx, k, func() (err error) { vals, err = r.s.client.HMGet(ctx, k, "m", "v").Result(); return err })
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) && strings.HasPrefix(re.Error(), "WRONGTYPE") {
			return nil, time.Time{}, errResultCorrupt
		}
		return nil, time.Time{}, fmt.Errorf("redisstate: results Get: %w", err)
	}
	if len(vals) != 2 {
		return nil, time.Time{}, fmt.Errorf("redisstate: results Get: unexpected reply of %d values", len(vals))
	}
	if vals[0] == nil && vals[1] == nil {
		return nil, time.Time{}, store.ErrNotFound
	}
	m, ok1 := vals[0].(string)
	v, ok2 := vals[1].(string)
	if !ok1 || !ok2 || len(v) > store.MaxResultBytes {
		return nil, time.Time{}, errResultCorrupt
	}
	ms, ok := parseMillis(m)
	if !ok {
		return nil, time.Time{}, errResultCorrupt
	}
	return []byte(v), time.UnixMilli(ms), nil
}

// parseMillis parses a stored time: a decimal integer of at most 16
// digits, with an optional minus sign, no leading zero.
func parseMillis(m string) (int64, bool) {
	digits := strings.TrimPrefix(m, "-")
	if digits == "" || len(digits) > 16 || digits[0] == '0' && len(digits) > 1 || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(m, 10, 64)
	return n, err == nil
}

// Set keeps value under key, made at made, for ttl, unless a value made
// later is kept.
func (r results) Set(ctx context.Context, key string, value []byte, made time.Time, ttl time.Duration) error {
	if len(value) > store.MaxResultBytes {
		return fmt.Errorf("redisstate: results Set: a value of %d bytes, over store.MaxResultBytes", len(value))
	}
	ctx, cancel := r.s.bound(ctx)
	defer cancel()
	k := r.s.key("res:", key)
	err := r.s.run(ctx, resultSet, []string{k}, made.UnixMilli(), value, max(ttl.Milliseconds(), 1)).Err()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("redisstate: results Set: %w", err)
	}
	return nil
}
