package approval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// failingStore fails every operation with err.
type failingStore struct{ err error }

func (f failingStore) Load(context.Context, string) ([]byte, error)       { return nil, f.err }
func (f failingStore) Save(context.Context, string, []byte, []byte) error { return f.err }
func (f failingStore) Consume(context.Context, string, string) error      { return f.err }
func (f failingStore) Cancel(context.Context, string, string) error       { return f.err }

// approvedRow returns a fixture whose call_1 is approved and not yet used,
// its approval id and the stored row.
func approvedRow(t *testing.T, store *approval.MemoryStore) (fixture, string, []byte) {
	t.Helper()
	f := newFixture(t, store, nil, nil)
	id := expect(t, f.call("call_1", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if err := f.desk.Approve(context.Background(), f.get(t, id), time.Hour); err != nil {
		t.Fatal(err)
	}
	row, err := store.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return f, id, row
}

func put(t *testing.T, s approval.Store, id string, row []byte) {
	t.Helper()
	prev, err := s.Load(context.Background(), id)
	if errors.Is(err, approval.ErrNotFound) {
		prev = nil
	} else if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(context.Background(), id, prev, row); err != nil {
		t.Fatal(err)
	}
}

// TestFlippedByteFailsClosed flips every bit of every byte of an approved
// row in turn: not one of them runs the tool, each ends the call as
// approval_store_corrupt.
func TestFlippedByteFailsClosed(t *testing.T) {
	store := approval.NewMemoryStore()
	f, id, row := approvedRow(t, store)
	for i := range row {
		for bit := range 8 {
			bad := bytes.Clone(row)
			bad[i] ^= 1 << bit
			put(t, store, id, bad)
			err := f.call("call_1", booking)
			if f.calls.n.Load() != 0 {
				t.Fatalf("byte %d bit %d flipped (%q): the tool ran", i, bit, bad[i])
			}
			expect(t, err, taxonomy.KindNotPermitted, taxonomy.CodeApprovalStoreCorrupt)
			if _, err := f.desk.Get(context.Background(), id); !errors.Is(err, approval.ErrCorrupt) {
				t.Fatalf("byte %d bit %d flipped: Get = %v, want ErrCorrupt", i, bit, err)
			}
		}
	}
	// The genuine row still works.
	put(t, store, id, row)
	if err := f.call("call_1", booking); err != nil || f.calls.n.Load() != 1 {
		t.Fatalf("the genuine row: %v, %d executions", err, f.calls.n.Load())
	}
}

// TestHostileRowsFailClosed: rows a store might return that the layer
// never wrote.
func TestHostileRowsFailClosed(t *testing.T) {
	store := approval.NewMemoryStore()
	f, id, row := approvedRow(t, store)
	for name, bad := range map[string][]byte{
		"empty":          {},
		"null":           []byte("null"),
		"truncated":      row[:len(row)-1],
		"trailing data":  append(bytes.Clone(row), []byte(" {}")...),
		"unknown field":  bytes.Replace(row, []byte(`"id":`), []byte(`"approved":true,"id":`), 1),
		"upper-case mac": bytes.ToUpper(row),
		"no mac":         bytes.Replace(row, []byte(`"mac":"`), []byte(`"mac":"x`), 1),
	} {
		put(t, store, id, bad)
		expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalStoreCorrupt)
		if f.calls.n.Load() != 0 {
			t.Fatalf("%s: the tool ran", name)
		}
	}
}

// bigRowStore returns a row beyond MaxRowBytes: sealed and genuine, once
// the padding is ignored, which the layer must not do.
type bigRowStore struct {
	*approval.MemoryStore
}

func (s bigRowStore) Load(ctx context.Context, id string) ([]byte, error) {
	row, err := s.MemoryStore.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	return append(row, bytes.Repeat([]byte(" "), approval.MaxRowBytes)...), nil
}

func TestOversizeRowFailsClosed(t *testing.T) {
	mem := approval.NewMemoryStore()
	_, id, _ := approvedRow(t, mem)
	f := newFixture(t, bigRowStore{mem}, nil, nil)
	expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalStoreCorrupt)
	if _, err := f.desk.Get(context.Background(), id); !errors.Is(err, approval.ErrCorrupt) {
		t.Fatalf("Get = %v, want ErrCorrupt", err)
	}
	if f.calls.n.Load() != 0 {
		t.Fatal("an oversize row ran the tool")
	}
}

// TestForgedRowFailsClosed: a row sealed with another key (a writer who
// can reach the store but does not hold the key) never approves.
func TestForgedRowFailsClosed(t *testing.T) {
	store := approval.NewMemoryStore()
	f, id, _ := approvedRow(t, store)
	other := approval.NewMemoryStore()
	forger := approval.NewDesk(approval.WithStore(other), approval.WithSealKey(bytes.Repeat([]byte("f"), approval.MinKeyLen)))
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, f.calls.tool, forger.Middleware(nil))
	_, err := tool(runCtx("call_1"), json.RawMessage(booking))
	expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	req, err := forger.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := forger.Approve(context.Background(), req, time.Hour); err != nil {
		t.Fatal(err)
	}
	forged, err := other.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	put(t, store, id, forged)
	expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalStoreCorrupt)
	if f.calls.n.Load() != 0 {
		t.Fatal("a forged approval ran the tool")
	}
}

// TestCopiedRowFailsClosed: a genuine approval copied under the id of
// another request (another call, same tool and arguments) never approves
// that request.
func TestCopiedRowFailsClosed(t *testing.T) {
	store := approval.NewMemoryStore()
	f, _, row := approvedRow(t, store)
	id2 := expect(t, f.call("call_2", booking), taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	put(t, store, id2, row)
	expect(t, f.call("call_2", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalStoreCorrupt)
	if f.calls.n.Load() != 0 {
		t.Fatal("a copied approval ran the tool")
	}
}

// TestReplayedDecisionFailsClosed: the approved row written back after
// its use (a restored backup, a replayed write) does not run the tool a
// second time.
func TestReplayedDecisionFailsClosed(t *testing.T) {
	store := approval.NewMemoryStore()
	f, id, row := approvedRow(t, store)
	if err := f.call("call_1", booking); err != nil {
		t.Fatal(err)
	}
	put(t, store, id, row)
	expect(t, f.call("call_1", booking), taxonomy.KindNotPermitted, taxonomy.CodeApprovalReplayed)
	if n := f.calls.n.Load(); n != 1 {
		t.Fatalf("%d executions, want 1", n)
	}
}

// conflictStore loses every compare-and-swap.
type conflictStore struct{ *approval.MemoryStore }

func (conflictStore) Save(context.Context, string, []byte, []byte) error { return approval.ErrConflict }

// blockingStore answers only when its context ends.
type blockingStore struct{}

func (blockingStore) Load(ctx context.Context, _ string) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
func (blockingStore) Save(ctx context.Context, _ string, _, _ []byte) error {
	<-ctx.Done()
	return ctx.Err()
}
func (blockingStore) Consume(ctx context.Context, _, _ string) error { <-ctx.Done(); return ctx.Err() }
func (blockingStore) Cancel(ctx context.Context, _, _ string) error  { <-ctx.Done(); return ctx.Err() }

// TestStoreFailuresFailClosed: a store that fails, always conflicts or
// does not answer never lets the tool run, and its error text reaches no
// message.
func TestStoreFailuresFailClosed(t *testing.T) {
	secret := canary.Secrets[0].Value
	for name, s := range map[string]approval.Store{
		"failing":     failingStore{errors.New("dial postgres://app:" + secret + "@db")},
		"conflicting": conflictStore{approval.NewMemoryStore()},
		"blocking":    blockingStore{},
	} {
		t.Run(name, func(t *testing.T) {
			var c counter
			desk := approval.NewDesk(approval.WithStore(s, store.WithTimeout(time.Millisecond)), approval.WithSealKey(key))
			tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, c.tool, desk.Middleware(nil))
			res, err := tool(runCtx("call_1"), json.RawMessage(booking))
			expect(t, err, taxonomy.KindFailed, taxonomy.CodeApprovalStoreFailed)
			if retry, _ := taxonomy.ShouldRetry(err, false); !retry || c.n.Load() != 0 {
				t.Fatalf("retry=%v executions=%d; want a transient failure and no execution", retry, c.n.Load())
			}
			if leaked := canary.Leaked(err.Error() + toolmw.ForModel(res, err)); leaked != "" {
				t.Fatalf("the store's error text leaked: %s", err)
			}
		})
	}
	// The caller's own cancellation and deadline are theirs, not the store's.
	desk := approval.NewDesk(approval.WithStore(blockingStore{}, store.WithTimeout(time.Hour)), approval.WithSealKey(key))
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, testutilOK, desk.Middleware(nil))
	ctx, cancel := context.WithCancel(runCtx("call_1"))
	cancel()
	if _, err := tool(ctx, json.RawMessage(booking)); err != context.Canceled {
		t.Fatalf("a cancelled call ended in %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithDeadline(runCtx("call_1"), time.Now())
	defer cancel()
	_, err := tool(ctx, json.RawMessage(booking))
	expect(t, err, taxonomy.KindTimeout, taxonomy.CodeDeadlineExceeded)
}

func testutilOK(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Text("ok"), nil
}

// TestSummaryIsScrubbedAndBounded: a secret in the arguments never
// reaches the summary, the error, the model or the stored row; a huge
// argument is cut after scrubbing.
func TestSummaryIsScrubbedAndBounded(t *testing.T) {
	store := approval.NewMemoryStore()
	f := newFixture(t, store, nil, nil)
	for i, secret := range canary.Values() {
		callID := "call_s" + string(rune('a'+i))
		args, _ := json.Marshal(map[string]any{"booking": "BK-1", "note": "use " + secret, "auth": map[string]string{"password": secret}})
		res, err := f.tool(runCtx(callID), args)
		id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
		info, _ := json.Marshal(taxonomy.InfoOf(err))
		row, _ := store.Load(context.Background(), id)
		req := f.get(t, id)
		for sink, text := range map[string]string{
			"summary": req.Summary, "info": string(info), "error": err.Error(),
			"model": toolmw.ForModel(res, err), "stored row": string(row),
		} {
			if family := canary.Leaked(text); family != "" {
				t.Errorf("%s: the %s canary reached the %s: %s", secret, family, sink, text)
			}
		}
		if !strings.Contains(req.Summary, "BK-1") {
			t.Errorf("the summary lost what the reviewer needs: %s", req.Summary)
		}
	}
	huge, _ := json.Marshal(map[string]string{"note": strings.Repeat("x", 1<<20-100) + canary.Secrets[0].Value})
	_, err := f.tool(runCtx("call_huge"), huge)
	id := expect(t, err, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending)
	if s := f.get(t, id).Summary; len(s) > taxonomy.MaxApprovalSummary || !strings.HasSuffix(s, "…") {
		t.Fatalf("a summary of %d bytes", len(s))
	}
}
