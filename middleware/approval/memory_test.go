package approval_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/approval/approvaltest"
)

func TestMemoryStoreConformance(t *testing.T) {
	approvaltest.TestStore(t, func(*testing.T) approval.Store { return approval.NewMemoryStore() })
}

// TestMemoryStoreIsBounded: rows, row bytes and used nonces stay within
// their bounds, the oldest going first.
func TestMemoryStoreIsBounded(t *testing.T) {
	ctx := context.Background()
	s := approval.NewMemoryStore()
	for i := range approval.MemoryMaxRows + 10 {
		if err := s.Save(ctx, fmt.Sprintf("apr_%d", i), nil, []byte("r")); err != nil {
			t.Fatal(err)
		}
	}
	if rows, _ := s.Len(); rows != approval.MemoryMaxRows {
		t.Fatalf("%d rows, want %d", rows, approval.MemoryMaxRows)
	}
	if _, err := s.Load(ctx, "apr_0"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("the oldest row was kept: %v", err)
	}
	if _, err := s.Load(ctx, fmt.Sprintf("apr_%d", approval.MemoryMaxRows+9)); err != nil {
		t.Fatalf("the newest row was dropped: %v", err)
	}

	s = approval.NewMemoryStore()
	big := make([]byte, approval.MaxRowBytes)
	n := approval.MemoryMaxBytes/approval.MaxRowBytes + 5
	for i := range n {
		if err := s.Save(ctx, fmt.Sprintf("apr_%d", i), nil, big); err != nil {
			t.Fatal(err)
		}
	}
	if rows, _ := s.Len(); rows*approval.MaxRowBytes > approval.MemoryMaxBytes {
		t.Fatalf("%d rows of %d bytes exceed %d bytes", rows, approval.MaxRowBytes, approval.MemoryMaxBytes)
	}

	for i := range approval.MemoryMaxNonces + 10 {
		if err := s.Consume(ctx, fmt.Sprintf("n%d", i), "op"); err != nil {
			t.Fatal(err)
		}
	}
	if _, nonces := s.Len(); nonces != approval.MemoryMaxNonces {
		t.Fatalf("%d nonces, want %d", nonces, approval.MemoryMaxNonces)
	}
	if err := s.Consume(ctx, fmt.Sprintf("n%d", approval.MemoryMaxNonces+9), "op_2"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("the newest nonce was forgotten: %v", err)
	}
}

func TestMemoryStoreRefusesBeyondBounds(t *testing.T) {
	ctx := context.Background()
	s := approval.NewMemoryStore()
	for name, err := range map[string]error{
		"empty id":     s.Save(ctx, "", nil, []byte("x")),
		"long id":      s.Save(ctx, string(make([]byte, approval.MaxIDLen+1)), nil, []byte("x")),
		"large row":    s.Save(ctx, "apr_1", nil, make([]byte, approval.MaxRowBytes+1)),
		"empty nonce":  s.Consume(ctx, "", "op"),
		"long nonce":   s.Consume(ctx, string(make([]byte, approval.MaxNonceLen+1)), "op"),
		"empty op":     s.Consume(ctx, "n1", ""),
		"long op":      s.Consume(ctx, "n1", string(make([]byte, approval.MaxOpLen+1))),
		"cancel op":    s.Cancel(ctx, "n1", string(make([]byte, approval.MaxOpLen+1))),
		"cancel nonce": s.Cancel(ctx, string(make([]byte, approval.MaxNonceLen+1)), "op"),
	} {
		if err == nil || errors.Is(err, approval.ErrConflict) || errors.Is(err, approval.ErrConsumed) {
			t.Errorf("%s: %v, want a store failure", name, err)
		}
	}
	if rows, nonces := s.Len(); rows != 0 || nonces != 0 {
		t.Fatalf("refused input was stored: %d rows, %d nonces", rows, nonces)
	}
}
