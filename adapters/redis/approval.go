package redisstate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw/middleware/approval"
)

// The bounds and lifetime of what [Store.Approvals] keeps.
const (
	// MaxApprovalKeyLen bounds an approval id and a nonce, in bytes; the
	// layer's own are at most approval.MaxIDLen and approval.MaxNonceLen.
	MaxApprovalKeyLen = 512
	// MaxApprovalRowBytes bounds a stored row, in bytes; the layer's sealed
	// rows are at most approval.MaxRowBytes.
	MaxApprovalRowBytes = 64 << 10
	// ApprovalTTL is how long a request's row and a used nonce live after
	// their last write. It is longer than approval.MaxTTL, the longest an
	// approval stands, so a decision's nonce, spent when the approval was
	// used, revoked or replaced, is remembered for as long as the decision
	// could still be valid: its row written back is refused as replayed. A
	// request untouched that long (left pending, or denied) is forgotten,
	// and its call asks again.
	ApprovalTTL = 32 * 24 * time.Hour
)

// ErrApprovalTooLarge is returned, wrapped, for an approval id, nonce or
// row over its bound ([MaxApprovalKeyLen], [MaxApprovalRowBytes]), before
// Redis is asked. The approval layer fails closed on it.
var ErrApprovalTooLarge = errors.New("redisstate: an approval id, nonce or row is over its bound")

// approvalSwap replaces the row at KEYS[1] with ARGV[2] when it is ARGV[1],
// and renews its lifetime (ARGV[3], ms). It returns 1 when it wrote, 0
// otherwise. Lua compares the rows as bytes.
var approvalSwap = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur or cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`)

// Approvals returns the Store's approval.Store: the rows of approval
// requests and the used nonces of decisions, shared by every replica on
// the same Redis with the same prefix. Save is a compare-and-swap (SET NX
// for a new row, a Lua script comparing the row otherwise) and Consume a
// SET NX, each one command on one key, so Redis Cluster serves them too.
// Every key expires [ApprovalTTL] after its last write.
//
// Unlike the Store's other ports, it does not fall back to local state:
// when Redis fails or is slow, its methods return the error and the
// approval layer fails closed (the tool does not run). Decisions outlive a
// restart of Redis only as far as Redis's own persistence (AOF or RDB)
// keeps them; without it a restart forgets every request and every used
// nonce. The approval layer bounds each operation (approval.WithStoreTimeout);
// without a deadline the Store's timeout applies.
//
// Keys are the prefix, "apr:" or "aprn:", and 32 hex digits of the SHA-256
// of the id or nonce, so any string may be an id. It is safe for
// concurrent use.
func (s *Store) Approvals() approval.Store { return approvals{s} }

type approvals struct{ s *Store }

// bound returns ctx bounded by approval.DefaultStoreTimeout when it has no
// deadline.
func (approvals) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, approval.DefaultStoreTimeout)
}

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
	ctx, cancel := a.bound(ctx)
	defer cancel()
	row, err := a.s.client.Get(ctx, a.s.key("apr:", id)).Bytes()
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
	ctx, cancel := a.bound(ctx)
	defer cancel()
	key := a.s.key("apr:", id)
	if prev == nil {
		ok, err := a.s.client.SetNX(ctx, key, row, ApprovalTTL).Result()
		if err != nil {
			return fmt.Errorf("redisstate: approval Save: %w", err)
		}
		if !ok {
			return approval.ErrConflict
		}
		return nil
	}
	n, err := approvalSwap.Run(ctx, a.s.client, []string{key}, prev, row, ApprovalTTL.Milliseconds()).Int64()
	if err != nil {
		return fmt.Errorf("redisstate: approval Save: %w", err)
	}
	if n != 1 {
		return approval.ErrConflict
	}
	return nil
}

// Consume marks nonce used: the first call, across every replica, returns
// nil, the others an error matching approval.ErrConsumed.
func (a approvals) Consume(ctx context.Context, nonce string) error {
	if err := checkApprovalKey("approval Consume: the nonce", nonce); err != nil {
		return err
	}
	ctx, cancel := a.bound(ctx)
	defer cancel()
	ok, err := a.s.client.SetNX(ctx, a.s.key("aprn:", nonce), "1", ApprovalTTL).Result()
	if err != nil {
		return fmt.Errorf("redisstate: approval Consume: %w", err)
	}
	if !ok {
		return approval.ErrConsumed
	}
	return nil
}
