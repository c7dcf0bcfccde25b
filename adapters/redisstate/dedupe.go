package redisstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/store"
)

// MaxCallRecordOpLen bounds, in bytes, an operation id and an arguments
// digest [Store.CallRecords] keeps with a record; the dedupe layer's are
// 32 and 64 bytes. A longer one is refused with an error matching
// dedupe.ErrTooLarge before Redis is asked, and a stored one longer is
// corrupt.
const MaxCallRecordOpLen = 128

// maxMillis bounds a time or a duration the call records keep, in
// milliseconds: below 2^53, so Lua's doubles hold it exactly (2^53 ms is
// past the year 285,000).
const maxMillis = 1<<53 - 1

// luaRecord is the Lua that reads a call record (KEYS[1]) for the scripts
// of [Store.CallRecords]. A record is a hash: s ('s' started, 'd' done),
// op, a (the arguments' digest), u (the lease's end, ms of the layer's
// clock), k (when the record is forgotten, ms of the layer's clock) and,
// when done, o (the outcome). load() returns nil when there is none, false
// when it does not parse — a key of another type, a field missing, left
// over or too long, a time that is not a decimal integer below 2^53, a
// state other than 's' and 'd' — and the record otherwise, having read no
// field before knowing its length (a hostile value may be large). ms(n)
// writes a time as Redis must keep it: the decimal integer, never "1e+15".
var luaRecord = fmt.Sprintf(`
local maxop, maxout = %d, %d
local function num(v)
  if string.len(v) > 16 or not string.match(v, '^%%d+$') or (string.len(v) > 1 and string.sub(v, 1, 1) == '0') then
    return nil
  end
  local n = tonumber(v)
  if n > 9007199254740991 then return nil end
  return n
end
local function ms(n) return string.format('%%.0f', n) end
local function load()
  local t = redis.call('TYPE', KEYS[1]).ok
  if t == 'none' then return nil end
  if t ~= 'hash' then return false end
  local n = redis.call('HLEN', KEYS[1])
  if n ~= 5 and n ~= 6 then return false end
  if redis.call('HSTRLEN', KEYS[1], 's') ~= 1 or redis.call('HSTRLEN', KEYS[1], 'op') > maxop or
     redis.call('HSTRLEN', KEYS[1], 'a') > maxop or redis.call('HSTRLEN', KEYS[1], 'u') > 16 or
     redis.call('HSTRLEN', KEYS[1], 'k') > 16 then
    return false
  end
  local v = redis.call('HMGET', KEYS[1], 's', 'op', 'a', 'u', 'k')
  for i = 1, 5 do
    if not v[i] then return false end
  end
  local r = {s = v[1], op = v[2], a = v[3], us = v[4], u = num(v[4]), k = num(v[5])}
  if not r.u or not r.k or r.op == '' then return false end
  if r.s == 's' then
    if n ~= 5 then return false end
  elseif r.s == 'd' then
    if n ~= 6 or redis.call('HEXISTS', KEYS[1], 'o') == 0 or redis.call('HSTRLEN', KEYS[1], 'o') > maxout then
      return false
    end
  else
    return false
  end
  return r
end
`, MaxCallRecordOpLen, dedupe.MaxOutcome)

// recordClaim claims the record at KEYS[1]. ARGV: op, args, now, until,
// keep (ms), takeover ('1' or '0'). A record whose k is at or before now
// is absent; with takeover, a started record of the same args whose lease
// ended at or before now is taken over. It returns {-1} when the record is corrupt (left as it is),
// else {claimed (1 or 0), op, args, until, done (1 or 0), outcome (done
// only)}: the record as it is after the claim. The record is kept until
// the later of now + keep and the lease's end, and expires then.
var recordClaim = redis.NewScript(luaRecord + `
local now, keep, u = tonumber(ARGV[3]), tonumber(ARGV[5]), tonumber(ARGV[4])
local r = load()
if r == false then return {-1} end
if r and r.k <= now then r = nil end
if not r then
  local k = math.max(now + keep, u)
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], 's', 's', 'op', ARGV[1], 'a', ARGV[2], 'u', ARGV[4], 'k', ms(k))
  redis.call('PEXPIRE', KEYS[1], ms(math.max(k - now, 1)))
  return {1, ARGV[1], ARGV[2], ARGV[4], 0}
end
if r.s == 's' and r.op ~= ARGV[1] and r.a == ARGV[2] and ARGV[6] == '1' and r.u <= now then
  local k = math.max(r.k, now + keep, u)
  redis.call('HSET', KEYS[1], 'op', ARGV[1], 'u', ARGV[4], 'k', ms(k))
  redis.call('PEXPIRE', KEYS[1], ms(math.max(k - now, 1)))
  return {1, ARGV[1], r.a, ARGV[4], 0}
end
if r.s == 'd' then
  return {0, r.op, r.a, r.us, 1, redis.call('HGET', KEYS[1], 'o')}
end
return {0, r.op, r.a, r.us, 0}
`)

// recordRenew moves the lease of the record at KEYS[1] that ARGV[1] holds
// (started) to ARGV[2] and keeps it at least ARGV[4] ms from now (ARGV[3])
// and until the lease's end. It returns 1 when it did, 0 when the op holds
// it no more, -1 when it is corrupt (left as it is).
var recordRenew = redis.NewScript(luaRecord + `
local now, keep, u = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[2])
local r = load()
if r == false then return -1 end
if not r or r.k <= now or r.s ~= 's' or r.op ~= ARGV[1] then return 0 end
local k = math.max(r.k, now + keep, u)
redis.call('HSET', KEYS[1], 'u', ARGV[2], 'k', ms(k))
redis.call('PEXPIRE', KEYS[1], ms(math.max(k - now, 1)))
return 1
`)

// recordFinish makes the record at KEYS[1] that ARGV[1] holds done with
// the outcome ARGV[2], kept at least ARGV[4] ms from now (ARGV[3]). It
// returns 1 when it did, or when the op made it done with this outcome
// already; 0 when the op holds it no more; -1 when it is corrupt (left as
// it is).
var recordFinish = redis.NewScript(luaRecord + `
local now, keep = tonumber(ARGV[3]), tonumber(ARGV[4])
local r = load()
if r == false then return -1 end
if not r or r.k <= now or r.op ~= ARGV[1] then return 0 end
if r.s == 'd' then
  if redis.call('HGET', KEYS[1], 'o') == ARGV[2] then return 1 end
  return 0
end
local k = math.max(r.k, now + keep)
redis.call('HSET', KEYS[1], 's', 'd', 'o', ARGV[2], 'k', ms(k))
redis.call('PEXPIRE', KEYS[1], ms(math.max(k - now, 1)))
return 1
`)

// recordRelease deletes the record at KEYS[1] when ARGV[1] holds it
// (started). It returns 1 when it did, 0 when there was nothing of the op
// to delete, -1 when the record is corrupt (left as it is).
var recordRelease = redis.NewScript(luaRecord + `
local r = load()
if r == false then return -1 end
if not r or r.s ~= 's' or r.op ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`)

// errRecordCorrupt: a stored call record does not parse.
var errRecordCorrupt = fmt.Errorf("redisstate: a call record is not one: %w", store.ErrCorrupt)

// CallRecords returns the [dedupe.Store] of s: give it to dedupe.WithStore
// in every replica serving runs named with budget.WithID, so that a call
// is made once across the fleet, and across a replica's crash. A record
// is the Redis hash PREFIX + "dd:" + 32 hex digits of the run id's SHA-256
// + 32 hex digits of the key's SHA-256, so any string may be a run id or a
// key; it holds the record's state, the op holding it, the arguments'
// digest, the lease's end and when it is forgotten (both in milliseconds
// of the layer's clock, which is the only clock the records compare) and,
// once done, the outcome (at most dedupe.MaxOutcome bytes, refused with an
// error matching dedupe.ErrTooLarge before Redis is asked; an op or an
// arguments digest over [MaxCallRecordOpLen] is refused alike). A record
// expires on Redis keep after its last write, and never before its lease
// ends. Claim, Renew, Finish and Release are one Lua script on that one
// key each, one round trip (Redis Cluster serves them too); a dedupe'd
// call costs two, its claim and its finish.
//
// A record that does not parse — a key of another type, a field missing,
// unknown or too long, a time that is not a decimal integer below 2^53
// (garbage, a negative number), an outcome over dedupe.MaxOutcome — is
// corrupt: every method returns an error wrapping store.ErrCorrupt and
// leaves it as it is, on which the layer does not run the call.
//
// Records outlive a restart of Redis only as far as its persistence (AOF)
// keeps them: a record lost while its run goes on lets a repeat run the
// tool again. On a cluster a failing node rests as for the other ports
// (see [NodeRest]); Release is sent to the client even then, in full
// (EVAL): it undoes a call that did not run. The returned Store is safe
// for concurrent use.
func (s *Store) CallRecords() dedupe.Store { return callRecords{s} }

type callRecords struct{ s *Store }

// key returns the record's key: the prefix, "dd:", and 32 hex digits of
// the SHA-256 of the run id and of the key each.
func (c callRecords) key(run, key string) string {
	sum := sha256.Sum256([]byte(key))
	var b [32]byte
	hex.Encode(b[:], sum[:16])
	return c.s.key("dd:", run) + string(b[:])
}

// millis returns t in milliseconds since the epoch, or an error for a
// time the records cannot keep.
func millis(what string, t time.Time) (int64, error) {
	ms := t.UnixMilli()
	if ms < 0 || ms > maxMillis {
		return 0, fmt.Errorf("redisstate: call record %s: a time before 1970 or past 2^53 ms", what)
	}
	return ms, nil
}

// keepMillis returns keep in whole milliseconds, rounded up (a record is
// kept at least keep), at least 0 and at most maxMillis.
func keepMillis(keep time.Duration) int64 {
	if keep <= 0 {
		return 0
	}
	ms := int64(keep / time.Millisecond)
	if keep%time.Millisecond != 0 {
		ms++
	}
	return min(ms, maxMillis)
}

// checkOp checks an op or an arguments digest a method is given.
func checkOp(what, name, v string, empty bool) error {
	if v == "" && !empty {
		return fmt.Errorf("redisstate: call record %s: the %s is empty", what, name)
	}
	if len(v) > MaxCallRecordOpLen {
		return fmt.Errorf("redisstate: call record %s: the %s: %d bytes, over the bound of %d: %w",
			what, name, len(v), MaxCallRecordOpLen, dedupe.ErrTooLarge)
	}
	return nil
}

// Claim claims the record of key in run, in one round trip.
func (c callRecords) Claim(ctx context.Context, run, key string, cl dedupe.Claim) (dedupe.Record, error) {
	if err := checkOp("Claim", "operation id", cl.Op, false); err != nil {
		return dedupe.Record{}, err
	}
	if err := checkOp("Claim", "arguments digest", cl.Args, true); err != nil {
		return dedupe.Record{}, err
	}
	now, err := millis("Claim", cl.Now)
	if err != nil {
		return dedupe.Record{}, err
	}
	until, err := millis("Claim", cl.Until)
	if err != nil {
		return dedupe.Record{}, err
	}
	takeover := "0"
	if cl.Takeover {
		takeover = "1"
	}
	ctx, cancel := c.s.bound(ctx)
	defer cancel()
	v, err := c.s.run(ctx, recordClaim, []string{c.key(run, key)},
		cl.Op, cl.Args, now, until, keepMillis(cl.Keep), takeover).Result()
	if err != nil {
		return dedupe.Record{}, fmt.Errorf("redisstate: call record Claim: %w", err)
	}
	return parseRecord(v)
}

// parseRecord reads the record recordClaim returns, checking again what
// the script checked: a reply that does not parse is corrupt too.
func parseRecord(v any) (dedupe.Record, error) {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return dedupe.Record{}, fmt.Errorf("redisstate: call record Claim: unexpected reply %T", v)
	}
	if code, _ := a[0].(int64); code < 0 {
		return dedupe.Record{}, errRecordCorrupt
	}
	if len(a) != 5 && len(a) != 6 {
		return dedupe.Record{}, errRecordCorrupt
	}
	op, ok1 := a[1].(string)
	args, ok2 := a[2].(string)
	until, ok3 := a[3].(string)
	done, ok4 := a[4].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 || op == "" || len(op) > MaxCallRecordOpLen || len(args) > MaxCallRecordOpLen {
		return dedupe.Record{}, errRecordCorrupt
	}
	ms, err := strconv.ParseInt(until, 10, 64)
	if err != nil || ms < 0 || ms > maxMillis || strings.HasPrefix(until, "+") {
		return dedupe.Record{}, errRecordCorrupt
	}
	rec := dedupe.Record{Op: op, Args: args}
	switch {
	case done == 1 && len(a) == 6:
		out, ok := a[5].(string)
		if !ok || len(out) > dedupe.MaxOutcome {
			return dedupe.Record{}, errRecordCorrupt
		}
		rec.Done, rec.Outcome = true, []byte(out) // a done record has no lease
	case done == 0 && len(a) == 5:
		rec.Until = time.UnixMilli(ms)
	default:
		return dedupe.Record{}, errRecordCorrupt
	}
	return rec, nil
}

// Renew moves the lease op holds, in one round trip.
func (c callRecords) Renew(ctx context.Context, run, key, op string, until, now time.Time, keep time.Duration) error {
	if err := checkOp("Renew", "operation id", op, false); err != nil {
		return err
	}
	u, err := millis("Renew", until)
	if err != nil {
		return err
	}
	n, err := millis("Renew", now)
	if err != nil {
		return err
	}
	ctx, cancel := c.s.bound(ctx)
	defer cancel()
	r, err := c.s.run(ctx, recordRenew, []string{c.key(run, key)}, op, u, n, keepMillis(keep)).Int64()
	return settled("Renew", r, err)
}

// Finish records the outcome of the call op holds, in one round trip.
func (c callRecords) Finish(ctx context.Context, run, key, op string, outcome []byte, now time.Time, keep time.Duration) error {
	if len(outcome) > dedupe.MaxOutcome {
		return fmt.Errorf("redisstate: call record Finish: the outcome: %d bytes, over the bound of %d: %w",
			len(outcome), dedupe.MaxOutcome, dedupe.ErrTooLarge)
	}
	if err := checkOp("Finish", "operation id", op, false); err != nil {
		return err
	}
	n, err := millis("Finish", now)
	if err != nil {
		return err
	}
	ctx, cancel := c.s.bound(ctx)
	defer cancel()
	r, err := c.s.run(ctx, recordFinish, []string{c.key(run, key)}, op, outcome, n, keepMillis(keep)).Int64()
	return settled("Finish", r, err)
}

// Release deletes the record op holds while it is started, in one round
// trip.
func (c callRecords) Release(ctx context.Context, run, key, op string) error {
	if err := checkOp("Release", "operation id", op, false); err != nil {
		return err
	}
	ctx, cancel := c.s.bound(ctx)
	defer cancel()
	// EVAL, not EVALSHA, and straight to the client, as approvals' Cancel:
	// a Release Redis executes late, after a stall or a restart, must find
	// its script, and it undoes a call whose node may just have failed.
	r, err := recordRelease.Eval(ctx, c.s.client, []string{c.key(run, key)}, op).Int64()
	if err != nil {
		return fmt.Errorf("redisstate: call record Release: %w", err)
	}
	if r < 0 {
		return errRecordCorrupt
	}
	return nil
}

// settled reads the answer of Renew and Finish.
func settled(what string, r int64, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("redisstate: call record %s: %w", what, err)
	case r < 0:
		return errRecordCorrupt
	case r == 0:
		return dedupe.ErrLost
	}
	return nil
}
