package sqlstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// testContract checks the approval.Store contract on stores made by
// newStore; replica returns a second Store over the same backing database
// through its own connection pool, as another process would have.
func testContract(t *testing.T, newStore func(t *testing.T) (s, replica *sqlstore.Store)) {
	ctx := context.Background()

	t.Run("LoadMissing", func(t *testing.T) {
		s, _ := newStore(t)
		if _, err := s.Load(ctx, "nope"); !errors.Is(err, approval.ErrNotFound) {
			t.Fatalf("Load of a missing id: %v, want ErrNotFound", err)
		}
	})

	t.Run("CompareAndSwap", func(t *testing.T) {
		s, r := newStore(t)
		id := "appr-1"
		mustSave(t, s, id, nil, []byte("v1"))
		if err := r.Save(ctx, id, nil, []byte("other")); !errors.Is(err, approval.ErrConflict) {
			t.Fatalf("second insert: %v, want ErrConflict", err)
		}
		if err := r.Save(ctx, id, []byte("v0"), []byte("v2")); !errors.Is(err, approval.ErrConflict) {
			t.Fatalf("update with a stale prev: %v, want ErrConflict", err)
		}
		if err := r.Save(ctx, "appr-missing", []byte("v1"), []byte("v2")); !errors.Is(err, approval.ErrConflict) {
			t.Fatalf("update of a missing id: %v, want ErrConflict", err)
		}
		if err := r.Save(ctx, id, []byte{}, []byte("v2")); !errors.Is(err, approval.ErrConflict) {
			t.Fatalf("update with an empty, non-nil prev: %v, want ErrConflict", err)
		}
		mustLoad(t, r, id, "v1")
		mustSave(t, r, id, []byte("v1"), []byte("v2"))
		mustLoad(t, s, id, "v2")
		mustSave(t, s, id, []byte("v2"), nil) // an empty row is a row
		mustLoad(t, r, id, "")
		mustSave(t, s, id, []byte{}, []byte("v3"))
		mustLoad(t, r, id, "v3")
		if _, err := s.Load(ctx, "appr-missing"); !errors.Is(err, approval.ErrNotFound) {
			t.Fatalf("a failed Save stored a row: %v", err)
		}
	})

	t.Run("ConsumeOnce", func(t *testing.T) {
		s, r := newStore(t)
		if err := s.Consume(ctx, "n1", "op_1"); err != nil {
			t.Fatalf("first Consume: %v", err)
		}
		for _, st := range []*sqlstore.Store{s, r} {
			if err := st.Consume(ctx, "n1", "op_2"); !errors.Is(err, approval.ErrConsumed) {
				t.Fatalf("second Consume: %v, want ErrConsumed", err)
			}
			if err := st.Consume(ctx, "n1", "op_1"); err != nil {
				t.Fatalf("the first operation's Consume again: %v, want nil", err)
			}
		}
		if err := r.Cancel(ctx, "n1", "op_1"); err != nil {
			t.Fatal(err)
		}
		if err := s.Consume(ctx, "n1", "op_2"); err != nil {
			t.Fatalf("a Consume after the other replica's Cancel: %v", err)
		}
		if err := s.Consume(ctx, "n1", "op_1"); !errors.Is(err, approval.ErrCanceled) {
			t.Fatalf("the cancelled operation's Consume: %v, want ErrCanceled", err)
		}
		if err := r.Consume(ctx, "n2", "op_1"); err != nil {
			t.Fatalf("another nonce: %v", err)
		}
	})

	// Keys and rows a hostile caller could send: SQL, NUL bytes, invalid
	// UTF-8, case variants, the bounds.
	t.Run("HostileKeysAndRows", func(t *testing.T) {
		s, r := newStore(t)
		keys := []string{
			"", "'; DROP TABLE toolmw_approvals; --", "a\x00b", "\xff\xfe", "ID", "id", "id ",
			"💥", "?", "$1", strings.Repeat("k", sqlstore.MaxKeyBytes),
		}
		for i, k := range keys {
			row := []byte(fmt.Sprintf("row %d \x00\xff", i))
			mustSave(t, s, k, nil, row)
			if err := s.Consume(ctx, k, "op_1"); err != nil {
				t.Fatalf("Consume(%q): %v", k, err)
			}
		}
		for i, k := range keys {
			mustLoad(t, r, k, fmt.Sprintf("row %d \x00\xff", i))
			if err := r.Consume(ctx, k, "op_2"); !errors.Is(err, approval.ErrConsumed) {
				t.Fatalf("Consume(%q) again: %v", k, err)
			}
		}
		// The same keys as operation ids: kept apart, stored as bytes.
		for i, k := range keys[1:] {
			nonce := fmt.Sprintf("n-op-%d", i)
			if err := s.Consume(ctx, nonce, k); err != nil {
				t.Fatalf("Consume by operation %q: %v", k, err)
			}
			for _, other := range keys[1:] {
				if other == k {
					continue
				}
				if err := r.Cancel(ctx, nonce, other); err != nil {
					t.Fatalf("Cancel of operation %q: %v", other, err)
				}
			}
			if err := r.Consume(ctx, nonce, k); err != nil {
				t.Fatalf("operation %q's Consume again, after the others' Cancel: %v", k, err)
			}
			if err := r.Consume(ctx, nonce, "op_other"); !errors.Is(err, approval.ErrConsumed) {
				t.Fatalf("another's Consume after the Cancel of look-alikes of %q: %v, want ErrConsumed", k, err)
			}
		}
		big := bytes.Repeat([]byte{0xAB}, sqlstore.MaxRowBytes)
		mustSave(t, s, "big", nil, big)
		got, err := r.Load(ctx, "big")
		if err != nil || !bytes.Equal(got, big) {
			t.Fatalf("a row of MaxRowBytes: %d bytes, %v", len(got), err)
		}
	})

	t.Run("Bounds", func(t *testing.T) {
		s, _ := newStore(t)
		long := strings.Repeat("k", sqlstore.MaxKeyBytes+1)
		tooBig := make([]byte, sqlstore.MaxRowBytes+1)
		for name, err := range map[string]error{
			"Load id":     func() error { _, err := s.Load(ctx, long); return err }(),
			"Save id":     s.Save(ctx, long, nil, []byte("x")),
			"Save row":    s.Save(ctx, "id", nil, tooBig),
			"Consume key": s.Consume(ctx, long, "op"),
			"Consume op":  s.Consume(ctx, "n", long),
			"Cancel key":  s.Cancel(ctx, long, "op"),
			"Cancel op":   s.Cancel(ctx, "n", long),
		} {
			if !errors.Is(err, sqlstore.ErrTooLarge) {
				t.Errorf("%s over the bound: %v, want ErrTooLarge", name, err)
			}
		}
		// A prev longer than any stored row cannot match.
		mustSave(t, s, "id", nil, []byte("x"))
		if err := s.Save(ctx, "id", tooBig, []byte("y")); !errors.Is(err, approval.ErrConflict) {
			t.Errorf("a prev over the bound: %v, want ErrConflict", err)
		}
		if _, err := s.Load(ctx, "id"); err != nil {
			t.Fatal(err)
		}
	})

	// A nonce keeps at most MaxCancelledBytes of cancelled operations:
	// past it Cancel fails with ErrTooLarge and changes nothing.
	t.Run("CancelBound", func(t *testing.T) {
		s, r := newStore(t)
		op := func(i int) string { return fmt.Sprintf("%03d", i) + strings.Repeat("o", sqlstore.MaxKeyBytes-3) }
		if err := s.Consume(ctx, "n1", op(0)); err != nil {
			t.Fatal(err)
		}
		fit := sqlstore.MaxCancelledBytes / (2*sqlstore.MaxKeyBytes + 1)
		for i := 1; i <= fit; i++ {
			if err := r.Cancel(ctx, "n1", op(i)); err != nil {
				t.Fatalf("Cancel %d of %d: %v", i, fit, err)
			}
		}
		if err := r.Cancel(ctx, "n1", op(0)); !errors.Is(err, sqlstore.ErrTooLarge) {
			t.Fatalf("a Cancel past MaxCancelledBytes: %v, want ErrTooLarge", err)
		}
		if err := s.Consume(ctx, "n1", op(0)); err != nil {
			t.Fatalf("the refused Cancel changed the nonce: the holder's Consume = %v", err)
		}
		if err := r.Cancel(ctx, "n1", op(fit)); err != nil {
			t.Fatalf("a Cancel again at the bound: %v", err)
		}
		if err := s.Consume(ctx, "n1", op(fit)); !errors.Is(err, approval.ErrCanceled) {
			t.Fatalf("a cancelled operation at the bound: %v, want ErrCanceled", err)
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		s, _ := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		for name, err := range map[string]error{
			"Load":    func() error { _, err := s.Load(cctx, "x"); return err }(),
			"Save":    s.Save(cctx, "x", nil, []byte("x")),
			"Consume": s.Consume(cctx, "x", "op"),
			"Cancel":  s.Cancel(cctx, "x", "op"),
		} {
			if err == nil || errors.Is(err, approval.ErrNotFound) || errors.Is(err, approval.ErrConflict) || errors.Is(err, approval.ErrConsumed) {
				t.Errorf("%s with a cancelled context: %v, want a store failure", name, err)
			}
		}
		// Nothing was stored.
		if _, err := s.Load(ctx, "x"); !errors.Is(err, approval.ErrNotFound) {
			t.Errorf("after a cancelled Save: %v", err)
		}
		if err := s.Consume(ctx, "x", "op"); err != nil {
			t.Errorf("after a cancelled Consume and Cancel: %v", err)
		}
	})

	// A store's errors never quote an id, a nonce or a row: planted
	// secrets over the bound, and under a cancelled context.
	t.Run("ErrorsQuoteNothing", func(t *testing.T) {
		s, _ := newStore(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		pad := strings.Repeat("x", sqlstore.MaxKeyBytes)
		for _, secret := range canary.Values() {
			long := secret + pad
			row := []byte(secret + string(make([]byte, sqlstore.MaxRowBytes)))
			for _, err := range []error{
				func() error { _, err := s.Load(ctx, long); return err }(),
				s.Save(ctx, long, nil, []byte(secret)),
				s.Save(ctx, "id", nil, row),
				s.Consume(ctx, long, "op"),
				s.Consume(ctx, "n", long),
				s.Cancel(ctx, "n", long),
				func() error { _, err := s.Load(cctx, secret); return err }(),
				s.Save(cctx, secret, []byte(secret), []byte(secret)),
				s.Consume(cctx, secret, secret),
				s.Cancel(cctx, secret, secret),
			} {
				if err == nil {
					t.Fatal("no error")
				}
				if fam := canary.Leaked(err.Error()); fam != "" {
					t.Errorf("an error quotes the planted %s: %v", fam, err)
				}
			}
		}
	})

	// Two replicas, each with several goroutines, race to consume one
	// nonce: exactly one wins.
	t.Run("ConsumeRace", func(t *testing.T) {
		s, r := newStore(t)
		const rounds, perReplica = 5, 8
		for round := range rounds {
			nonce := fmt.Sprintf("race-%d", round)
			var wg sync.WaitGroup
			var mu sync.Mutex
			wins, errs := 0, []error{}
			start := make(chan struct{})
			for i := range 2 * perReplica {
				st := s
				if i%2 == 1 {
					st = r
				}
				wg.Go(func() {
					<-start
					err := st.Consume(ctx, nonce, fmt.Sprintf("op-%d", i))
					mu.Lock()
					defer mu.Unlock()
					switch {
					case err == nil:
						wins++
					case !errors.Is(err, approval.ErrConsumed):
						errs = append(errs, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if wins != 1 || len(errs) != 0 {
				t.Fatalf("round %d: %d winners, errors %v; want exactly 1 and none", round, wins, errs)
			}
		}
	})

	// Two replicas race read-modify-write cycles on one id: every Save that
	// succeeded is counted in the final row, none is lost.
	t.Run("SaveRace", func(t *testing.T) {
		s, r := newStore(t)
		const id, workers, incs = "counter", 8, 10
		mustSave(t, s, id, nil, []byte("0"))
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for i := range workers {
			st := s
			if i%2 == 1 {
				st = r
			}
			wg.Go(func() {
				for done := 0; done < incs; {
					prev, err := st.Load(ctx, id)
					if err == nil {
						var n int
						fmt.Sscan(string(prev), &n)
						err = st.Save(ctx, id, prev, []byte(fmt.Sprint(n+1)))
					}
					switch {
					case err == nil:
						done++
					case !errors.Is(err, approval.ErrConflict):
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
				}
			})
		}
		wg.Wait()
		if len(errs) != 0 {
			t.Fatalf("store failures: %v", errs)
		}
		mustLoad(t, s, id, fmt.Sprint(workers*incs))
	})
}

func mustSave(t *testing.T, s approval.Store, id string, prev, row []byte) {
	t.Helper()
	if err := s.Save(context.Background(), id, prev, row); err != nil {
		t.Fatalf("Save(%q): %v", id, err)
	}
}

func mustLoad(t *testing.T, s approval.Store, id, want string) {
	t.Helper()
	got, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	if string(got) != want {
		t.Fatalf("Load(%q) = %q, want %q", id, got, want)
	}
}
