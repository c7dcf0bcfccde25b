package redisstate

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware/approval"
)

// The bounds and lifetime of what [Store.Approvals] keeps.
const (
	// MaxApprovalKeyLen bounds an approval id, a nonce and an operation
	// id, in bytes; the layer's own are at most approval.MaxIDLen,
	// approval.MaxNonceLen and approval.MaxOpLen.
	MaxApprovalKeyLen = 512
	// MaxApprovalCancels bounds how many cancelled operations are kept for
	// one nonce: past it Cancel fails and changes nothing. A nonce's hash
	// thus holds at most MaxApprovalCancels+1 operation ids, about 16 KiB
	// at the longest.
	MaxApprovalCancels = 32
	// MaxApprovalRowBytes bounds a stored row, in bytes; the layer's sealed
	// rows are at most approval.MaxRowBytes.
	MaxApprovalRowBytes = 64 << 10
	// ApprovalTTL is how long a request's row and a used nonce (with its
	// cancelled operations) live after their last write. It is longer than approval.MaxTTL, the longest an
	// approval stands, so a decision's nonce, spent when the approval was
	// used, revoked or replaced, is remembered for as long as the decision
	// could still be valid: its row written back is refused as replayed. A
	// request untouched that long (left pending, or denied) is forgotten,
	// and its call asks again.
	ApprovalTTL = 32 * 24 * time.Hour
)

// ErrApprovalTooLarge is returned, wrapped, for an approval id, nonce,
// operation id or row over its bound ([MaxApprovalKeyLen],
// [MaxApprovalRowBytes]), before Redis is asked, and for a Cancel past
// [MaxApprovalCancels]. The approval layer fails closed on it.
var ErrApprovalTooLarge = errors.New("redisstate: an approval id, nonce, operation or row is over its bound")

// approvalSwap replaces the row at KEYS[1] with ARGV[2] when it is ARGV[1],
// and renews its lifetime (ARGV[3], ms). It returns 1 when it wrote, 0
// otherwise. Lua compares the rows as bytes.
var approvalSwap = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur or cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

// A nonce's record at KEYS[1] is a hash: field "by" holds the operation
// that consumed it (absent while it is free), and a field "x:" and an
// operation id for each cancelled operation. A string there (SET NX by a
// version before operations were recorded) is a nonce consumed by an
// operation unknown: never freed. Both scripts touch that one key only.

// approvalConsume consumes the nonce at KEYS[1] for the operation ARGV[1]
// and renews its lifetime (ARGV[2], ms). It returns 1 when the operation
// holds the nonce (now or already), 0 when another does, 2 when the
// operation was cancelled (nothing consumed).
var approvalConsume = redis.NewScript(`
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'none' and kind ~= 'hash' then return 0 end
if redis.call('HEXISTS', KEYS[1], 'x:' .. ARGV[1]) == 1 then return 2 end
local by = redis.call('HGET', KEYS[1], 'by')
if by then
  if by == ARGV[1] then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], 'by', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// approvalCancel cancels the operation ARGV[1] on the nonce at KEYS[1]:
// frees the nonce if it holds it, and records it as cancelled, renewing
// the lifetime (ARGV[2], ms), unless ARGV[3] operations are cancelled
// already. It returns 1 when the operation is cancelled (now or already),
// 0 when the bound refused it (nothing changed).
var approvalCancel = redis.NewScript(`
local kind = redis.call('TYPE', KEYS[1]).ok
if kind ~= 'none' and kind ~= 'hash' then return 1 end
local mark = 'x:' .. ARGV[1]
if redis.call('HEXISTS', KEYS[1], mark) == 1 then return 1 end
local by = redis.call('HGET', KEYS[1], 'by')
local cancelled = redis.call('HLEN', KEYS[1])
if by then cancelled = cancelled - 1 end
if cancelled >= tonumber(ARGV[3]) then return 0 end
if by == ARGV[1] then redis.call('HDEL', KEYS[1], 'by') end
redis.call('HSET', KEYS[1], mark, '1')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// Approvals returns the Store's approval.Store: the rows of approval
// requests and the used nonces of decisions, shared by every replica on
// the same Redis with the same prefix. Save is a compare-and-swap (SET NX
// for a new row, a Lua script comparing the row otherwise); Consume and
// Cancel are Lua scripts on the nonce's hash, which records the operation
// that consumed it and the operations cancelled, so a Consume Redis
// executes after its caller gave up and cancelled it consumes nothing.
// Each is one command on one key, so Redis Cluster serves them too.
// Every key expires [ApprovalTTL] after its last write.
//
// Unlike the Store's other ports, it does not fall back to local state:
// when Redis fails or is slow, its methods return the error and the
// approval layer fails closed (the tool does not run). Decisions outlive a
// restart of Redis only as far as Redis's own persistence (AOF or RDB)
// keeps them; without it a restart forgets every request and every used
// nonce. The approval layer bounds each operation (store.WithTimeout given
// to approval.WithStore); without a deadline the Store's timeout applies.
//
// Keys are the prefix, "apr:" (a string: the row) or "aprn:" (a hash: the
// nonce's record), and 32 hex digits of the SHA-256 of the id or nonce, so
// any string may be an id; and the prefix and "apri", a sorted set of the
// ids, which lists them (approval.Lister, see approvals.List), and expires
// ApprovalTTL after the last row was written. A nonce consumed by an earlier version is a
// string under the same key: it stays consumed, and an earlier version's
// replica sharing the Redis takes a nonce it finds freed for consumed (it
// may refuse an approval, never run one twice). It is safe for concurrent
// use.
func (s *Store) Approvals() approval.Store { return approvals{s: s, list: new(indexState)} }

type approvals struct {
	s    *Store
	list *indexState
}

// indexState is what an approval store remembers of its writes to the list
// of ids: after one fails, it writes none until the unix nanoseconds in
// until, so a failing node is not sent a write with every new row.
type indexState struct{ until atomic.Int64 }

// indexRest is how long an approval store writes no id to the list after a
// failed write; indexTimeout bounds one write.
const (
	indexRest    = 2 * time.Second
	indexTimeout = 20 * time.Millisecond
)

func checkApprovalKey(what, key string) error {
	if len(key) > MaxApprovalKeyLen {
		return fmt.Errorf("redisstate: %s: %d bytes, over the bound of %d: %w", what, len(key), MaxApprovalKeyLen, ErrApprovalTooLarge)
	}
	return nil
}

// Load returns the row stored under id, or an error matching
// approval.ErrNotFound.
func (a approvals) Load(ctx context.Context, id string) ([]byte, error) {
	if err := checkApprovalKey("approval Load: the id", id); err != nil {
		return nil, err
	}
	ctx, cancel := a.s.bound(ctx)
	defer cancel()
	key := a.s.key("apr:", id)
	var row []byte
	err := a.s.do(ctx, key, func() (err error) { row, err = a.s.client.Get(ctx, key).Bytes(); return err })
	switch {
	case errors.Is(err, redis.Nil):
		return nil, approval.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("redisstate: approval Load: %w", err)
	}
	if row == nil {
		row = []byte{}
	}
	return row, nil
}

// Save stores row under id when the row stored now is prev (with a nil
// prev, when id has none), or returns an error matching
// approval.ErrConflict.
func (a approvals) Save(ctx context.Context, id string, prev, row []byte) error {
	if err := checkApprovalKey("approval Save: the id", id); err != nil {
		return err
	}
	if len(row) > MaxApprovalRowBytes {
		return fmt.Errorf("redisstate: approval Save: the row: %d bytes, over the bound of %d: %w", len(row), MaxApprovalRowBytes, ErrApprovalTooLarge)
	}
	if len(prev) > MaxApprovalRowBytes {
		return approval.ErrConflict // no stored row is that long
	}
	ctx, cancel := a.s.bound(ctx)
	defer cancel()
	key := a.s.key("apr:", id)
	if prev == nil {
		var ok bool
		err := a.s.do(ctx, key, func() (err error) { ok, err = a.s.client.SetNX(ctx, key, row, ApprovalTTL).Result(); return err })
		if err != nil {
			return fmt.Errorf("redisstate: approval Save: %w", err)
		}
		if !ok {
			return approval.ErrConflict
		}
		a.index(ctx, id)
		return nil
	}
	n, err := a.s.run(ctx, approvalSwap, []string{key}, prev, row, ApprovalTTL.Milliseconds()).Int64()
	if err != nil {
		return fmt.Errorf("redisstate: approval Save: %w", err)
	}
	if n != 1 {
		return approval.ErrConflict
	}
	a.index(ctx, id)
	return nil
}

// index lists id (approvals.List) after its row was written, and renews
// the list's lifetime to that of the row written last. It is best effort,
// and its failure is not the Save's: the row is stored and the approval
// layer works as before, so the list of ids, a key on one node, never
// makes a write fail; nor does its failure rest the node (the ports' own
// operations judge the nodes). After a failed write it writes none for
// indexRest, and each write is bounded by indexTimeout. An id it failed to
// list is listed by the next write of its row (a decision, a use).
func (a approvals) index(ctx context.Context, id string) {
	idx := a.s.prefix + approvalIndex
	if time.Now().UnixNano() < a.list.until.Load() || a.s.cluster != nil && a.s.cluster.resting(idx) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, indexTimeout)
	defer cancel()
	err := a.s.client.ZAddNX(ctx, idx, redis.Z{Member: id}).Err()
	if err == nil {
		err = a.s.client.PExpire(ctx, idx, ApprovalTTL).Err()
	}
	if err != nil {
		a.list.until.Store(time.Now().Add(indexRest).UnixNano())
	}
}

// checkApprovalOp checks an operation id: 1 to MaxApprovalKeyLen bytes.
func checkApprovalOp(what, op string) error {
	if op == "" {
		return fmt.Errorf("redisstate: %s: the operation id is empty", what)
	}
	return checkApprovalKey(what+": the operation id", op)
}

// Consume marks nonce used by op: the first operation, across every
// replica, gets nil, and so does the same operation again; an operation
// cancelled before gets an error matching approval.ErrCanceled and
// consumes nothing; the others an error matching approval.ErrConsumed.
func (a approvals) Consume(ctx context.Context, nonce, op string) error {
	if err := checkApprovalKey("approval Consume: the nonce", nonce); err != nil {
		return err
	}
	if err := checkApprovalOp("approval Consume", op); err != nil {
		return err
	}
	ctx, cancel := a.s.bound(ctx)
	defer cancel()
	key := a.s.key("aprn:", nonce)
	n, err := a.s.run(ctx, approvalConsume, []string{key}, op, ApprovalTTL.Milliseconds()).Int64()
	if err != nil {
		return fmt.Errorf("redisstate: approval Consume: %w", err)
	}
	switch n {
	case 1:
		return nil
	case 2:
		return approval.ErrCanceled
	}
	return approval.ErrConsumed
}

// Cancel undoes op's Consume of nonce, applied or not, in one script on
// the nonce's hash: the nonce is freed if op holds it, and op is recorded
// as cancelled, so its Consume executed later consumes nothing. A nonce
// another operation holds stays consumed; cancelling op again changes
// nothing. Past [MaxApprovalCancels] cancelled operations of the nonce it
// changes nothing and returns an error matching [ErrApprovalTooLarge].
func (a approvals) Cancel(ctx context.Context, nonce, op string) error {
	if err := checkApprovalKey("approval Cancel: the nonce", nonce); err != nil {
		return err
	}
	if err := checkApprovalOp("approval Cancel", op); err != nil {
		return err
	}
	ctx, cancel := a.s.bound(ctx)
	defer cancel()
	key := a.s.key("aprn:", nonce)
	// EVAL, not EVALSHA: a Cancel sent to a Redis that stalls, and
	// executed only when it resumes, must find its script, or the Consume
	// it undoes, executed then too, would spend the decision. And straight
	// to the client: it undoes an operation whose node just failed, so it
	// must be sent even while that node would be left alone.
	n, err := approvalCancel.Eval(ctx, a.s.client, []string{key}, op, ApprovalTTL.Milliseconds(), MaxApprovalCancels).Int64()
	if err != nil {
		return fmt.Errorf("redisstate: approval Cancel: %w", err)
	}
	if n != 1 {
		return fmt.Errorf("redisstate: approval Cancel: %d operations of the nonce are cancelled already: %w", MaxApprovalCancels, ErrApprovalTooLarge)
	}
	return nil
}

// approvalIndex follows the prefix in the key of the sorted set of the
// approval ids: every member has the score 0, so ZRANGE BYLEX lists them
// in byte order.
const approvalIndex = "apri"

var _ approval.Lister = approvals{}

// List implements approval.Lister: at most limit rows whose ids sort after
// after, in byte order. A row's id joins the sorted set at the prefix and
// "apri" after each write of the row, best effort (see index); the rows
// are then read one GET each. An id whose row is gone (expired after
// ApprovalTTL) is removed from the set as it is found, so the set holds no
// more than the rows, and the ids of rows expired since the last listing
// passed them. A row whose id could not be added (the list's node failed
// just then), or saved by a version before listing, is not listed until
// its row is written again; its call still waits for a decision (fails
// closed), and it expires as before.
func (a approvals) List(ctx context.Context, after string, limit int) ([]approval.Listed, error) {
	if limit < 1 || limit > approval.MaxListPage {
		return nil, fmt.Errorf("redisstate: approval List: a limit of %d; it must be 1 to %d", limit, approval.MaxListPage)
	}
	if err := checkApprovalKey("approval List: the cursor", after); err != nil {
		return nil, err
	}
	ctx, cancel := a.s.bound(ctx)
	defer cancel()
	idx := a.s.prefix + approvalIndex
	from := "-"
	if after != "" {
		from = "(" + after
	}
	var out []approval.Listed
	for len(out) < limit {
		want := limit - len(out)
		var ids []string
		err := a.s.do(ctx, idx, func() (err error) {
			ids, err = a.s.client.ZRangeByLex(ctx, idx, &redis.ZRangeBy{Min: from, Max: "+", Count: int64(want)}).Result()
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("redisstate: approval List: %w", err)
		}
		for _, id := range ids {
			row, err := a.Load(ctx, id)
			switch {
			case errors.Is(err, approval.ErrNotFound):
				// Expired, or never stored: no longer listed. A failure
				// leaves it for the next listing.
				_ = a.s.do(ctx, idx, func() error { return a.s.client.ZRem(ctx, idx, id).Err() })
			case err != nil:
				return nil, err
			default:
				out = append(out, approval.Listed{ID: id, Row: row})
			}
		}
		if len(ids) < want {
			break
		}
		from = "(" + ids[len(ids)-1]
	}
	return out, nil
}
