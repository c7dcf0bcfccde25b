// Package approvaltest checks that an approval.Store keeps the contract the
// approval layer relies on. A store's own tests call [TestStore] with a
// function that makes an empty store:
//
//	func TestConformance(t *testing.T) {
//		approvaltest.TestStore(t, func(t *testing.T) approval.Store { return newStore(t) })
//	}
//
// It checks compare-and-swap Save (a nil prev creates, a stale prev
// conflicts, exactly one of many racing writers wins), Load (ErrNotFound,
// copies rather than aliases), Consume (exactly once per nonce across 50
// racing goroutines, each its own operation; the same operation again
// succeeds again), Cancel (a late Consume after the Cancel of its
// operation consumes nothing; a Cancel after a Consume that landed frees
// the nonce, and only that operation's; a Cancel again changes nothing; a
// nonce consumed by another operation, a retired one, is never freed;
// racing Consumes and Cancels leave the nonce consumed exactly when an
// operation not cancelled holds it), and the bounds every store must
// accept: ids of approval.MaxIDLen bytes, nonces of approval.MaxNonceLen
// bytes, operation ids of approval.MaxOpLen bytes, 8 cancelled operations
// of one nonce, rows of approval.MaxRowBytes bytes holding any byte value,
// ids that differ only in characters some backends treat specially (_ and
// . in LIKE patterns, case, a trailing space). Beyond the bounds a store
// may refuse with an error, but never panics and never returns another
// id's row.
//
// It then runs the approval cycle through an approval.Desk over the store,
// writing old rows back into it behind the Desk's back, as a party with
// write access to the store (but not the Desk's key) could: an approval
// written back after it was revoked (approve, deny, write back), after it
// was used, or after it expired and was replaced (read by a replica whose
// clock is behind) never runs the tool; a denial holds whatever other
// arguments the same call id comes with in between, and so does an
// approval; a row the Desk did not write fails closed. And with the
// store's answers to Consume lost or late (the Consume applied, but the
// Desk told it failed; or applied only after the Desk gave up and
// cancelled it): the call fails closed, the approval is not lost (the
// call made again runs, once), a revoked or replaced approval written back
// stays spent, and of replicas racing for one approval while answers are
// lost exactly one execution happens.
//
// A store that implements approval.Lister is checked for it too: pages in
// id order after a cursor, none longer than asked, every row listed once
// and as stored (look-alike ids kept apart); and through a Desk, a listing
// of the pending requests that skips rows failing their check and shows
// who asked and who decided, from the sealed row. The Desks it makes give each
// operation [Timeout], and after each failure they are made to see (a
// failure rests the store: calls fail closed at once meanwhile) let the
// rest, store.Rest, pass on their fake clocks.
package approvaltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolmw/toolmw/middleware/approval"
)

// racers is how many goroutines race in the concurrency checks.
const racers = 50

// TestStore runs the conformance checks against stores made by newStore,
// one fresh store per check. newStore may call t.Cleanup to close it.
func TestStore(t *testing.T, newStore func(t *testing.T) approval.Store) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, s approval.Store)
	}{
		{"LoadMissing", testLoadMissing},
		{"SaveCreates", testSaveCreates},
		{"CompareAndSwap", testCompareAndSwap},
		{"RowsAreCopies", testRowsAreCopies},
		{"SaveRace", testSaveRace},
		{"ConsumeOnce", testConsumeOnce},
		{"ConsumeRace", testConsumeRace},
		{"LateConsumeAfterCancel", testLateConsumeAfterCancel},
		{"CancelFreesALandedConsume", testCancelFreesALandedConsume},
		{"CancelIsIdempotent", testCancelIsIdempotent},
		{"CancelKeepsAnotherOpsConsume", testCancelKeepsAnotherOpsConsume},
		{"ConsumeCancelRace", testConsumeCancelRace},
		{"CancelBounds", testCancelBounds},
		{"Bounds", testBounds},
		{"LookAlikeIDs", testLookAlikeIDs},
		{"BeyondBounds", testBeyondBounds},
		{"RevokedApprovalRestored", testRevokedApprovalRestored},
		{"UsedApprovalRestored", testUsedApprovalRestored},
		{"ExpiredApprovalRestored", testExpiredApprovalRestored},
		{"DenialIsFinal", testDenialIsFinal},
		{"OtherArgumentsKeepTheDecision", testOtherArgumentsKeepTheDecision},
		{"CorruptRowFailsClosed", testCorruptRowFailsClosed},
		{"LostConsumeAnswerKeepsTheApproval", testLostConsumeAnswerKeepsTheApproval},
		{"LateConsumeKeepsTheApproval", testLateConsumeKeepsTheApproval},
		{"LostAnswerKeepsARevocation", testLostAnswerKeepsARevocation},
		{"LostAnswerKeepsAReplacement", testLostAnswerKeepsAReplacement},
		{"LostAnswersRaceRunsOnce", testLostAnswersRaceRunsOnce},
		{"ListPages", testListPages},
		{"ListThroughDesk", testListThroughDesk},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newStore(t)) })
	}
}

func testLoadMissing(t *testing.T, s approval.Store) {
	ctx := context.Background()
	if row, err := s.Load(ctx, "apr_missing"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("Load of a missing id = %q, %v; want ErrNotFound", row, err)
	}
}

func testSaveCreates(t *testing.T, s approval.Store) {
	ctx := context.Background()
	if err := s.Save(ctx, "apr_1", nil, []byte("row one")); err != nil {
		t.Fatalf("Save(nil prev) of a new id: %v", err)
	}
	mustLoad(t, s, "apr_1", "row one")
	if err := s.Save(ctx, "apr_1", nil, []byte("row two")); !errors.Is(err, approval.ErrConflict) {
		t.Fatalf("Save(nil prev) of an existing id = %v, want ErrConflict", err)
	}
	mustLoad(t, s, "apr_1", "row one")
	if _, err := s.Load(ctx, "apr_2"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("Load of another id = %v, want ErrNotFound", err)
	}
}

func testCompareAndSwap(t *testing.T, s approval.Store) {
	ctx := context.Background()
	if err := s.Save(ctx, "apr_1", []byte("anything"), []byte("x")); !errors.Is(err, approval.ErrConflict) {
		t.Fatalf("Save(prev) of a missing id = %v, want ErrConflict", err)
	}
	if _, err := s.Load(ctx, "apr_1"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("a conflicting Save stored a row: %v", err)
	}
	must(t, s.Save(ctx, "apr_1", nil, []byte("v1")))
	if err := s.Save(ctx, "apr_1", []byte("v0"), []byte("v2")); !errors.Is(err, approval.ErrConflict) {
		t.Fatalf("Save with a stale prev = %v, want ErrConflict", err)
	}
	// A prefix or an extension of the row is not the row.
	for _, prev := range []string{"v", "v1 ", "V1", ""} {
		if err := s.Save(ctx, "apr_1", []byte(prev), []byte("v2")); !errors.Is(err, approval.ErrConflict) {
			t.Fatalf("Save with prev %q (row is v1) = %v, want ErrConflict", prev, err)
		}
	}
	mustLoad(t, s, "apr_1", "v1")
	must(t, s.Save(ctx, "apr_1", []byte("v1"), []byte("v2")))
	mustLoad(t, s, "apr_1", "v2")
	if err := s.Save(ctx, "apr_1", []byte("v1"), []byte("v3")); !errors.Is(err, approval.ErrConflict) {
		t.Fatalf("Save with the replaced row as prev = %v, want ErrConflict", err)
	}
	// A row may be saved again unchanged, and may shrink or grow.
	must(t, s.Save(ctx, "apr_1", []byte("v2"), []byte("v2")))
	must(t, s.Save(ctx, "apr_1", []byte("v2"), bytes.Repeat([]byte("w"), 4096)))
	must(t, s.Save(ctx, "apr_1", bytes.Repeat([]byte("w"), 4096), []byte("z")))
	mustLoad(t, s, "apr_1", "z")
}

func testRowsAreCopies(t *testing.T, s approval.Store) {
	ctx := context.Background()
	row := []byte("original")
	must(t, s.Save(ctx, "apr_1", nil, row))
	copy(row, "CHANGED!")
	got, err := s.Load(ctx, "apr_1")
	must(t, err)
	if string(got) != "original" {
		t.Fatalf("the store kept the caller's slice: Load = %q", got)
	}
	copy(got, "CHANGED!")
	mustLoad(t, s, "apr_1", "original")
}

// testSaveRace: of many writers swapping the same row, exactly one wins.
func testSaveRace(t *testing.T, s approval.Store) {
	ctx := context.Background()
	must(t, s.Save(ctx, "apr_race", nil, []byte("start")))
	var wins atomic.Int32
	var winner atomic.Value
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			row := fmt.Sprintf("writer %d", i)
			switch err := s.Save(ctx, "apr_race", []byte("start"), []byte(row)); {
			case err == nil:
				wins.Add(1)
				winner.Store(row)
			case !errors.Is(err, approval.ErrConflict):
				errs <- err
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a losing Save returned %v, want ErrConflict", err)
	}
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d of %d racing Saves won, want exactly 1", n, racers)
	}
	mustLoad(t, s, "apr_race", winner.Load().(string))

	// Racing creators of one new id: exactly one wins too.
	wins.Store(0)
	start = make(chan struct{})
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := s.Save(ctx, "apr_new", nil, fmt.Appendf(nil, "creator %d", i)); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, approval.ErrConflict) {
				t.Errorf("a losing creator got %v, want ErrConflict", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d of %d racing creators won, want exactly 1", n, racers)
	}
}

func testConsumeOnce(t *testing.T, s approval.Store) {
	ctx := context.Background()
	must(t, s.Consume(ctx, "n1", "op_1"))
	if err := s.Consume(ctx, "n1", "op_2"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a second Consume = %v, want ErrConsumed", err)
	}
	// The same operation sent again is the same Consume: it succeeds again.
	if err := s.Consume(ctx, "n1", "op_1"); err != nil {
		t.Fatalf("the consuming operation's Consume again = %v, want nil", err)
	}
	if err := s.Consume(ctx, "n1", "op_3"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a third operation's Consume = %v, want ErrConsumed", err)
	}
	// An operation id is per nonce: op_1 may consume another nonce.
	must(t, s.Consume(ctx, "n2", "op_1"))
	// Nonces and ids are apart: a used nonce is no row, and a row's id is
	// no used nonce.
	if _, err := s.Load(ctx, "n1"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("Load of a used nonce = %v, want ErrNotFound", err)
	}
	must(t, s.Save(ctx, "n3", nil, []byte("row")))
	must(t, s.Consume(ctx, "n3", "op_1"))
}

// testConsumeRace: of many goroutines consuming one nonce, exactly one
// succeeds, for each of several nonces.
func testConsumeRace(t *testing.T, s approval.Store) {
	ctx := context.Background()
	const nonces = 3
	var wins [nonces]atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers * nonces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			n := i % nonces
			switch err := s.Consume(ctx, fmt.Sprintf("nonce_%d", n), fmt.Sprintf("op_%d", i)); {
			case err == nil:
				wins[n].Add(1)
			case !errors.Is(err, approval.ErrConsumed):
				t.Errorf("a losing Consume returned %v, want ErrConsumed", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	for n := range nonces {
		if got := wins[n].Load(); got != 1 {
			t.Errorf("nonce %d: %d of %d racing Consumes succeeded, want exactly 1", n, got, racers)
		}
	}
}

// testBounds: the longest id and nonce, and the largest row of any bytes,
// are kept exactly.
func testBounds(t *testing.T, s approval.Store) {
	ctx := context.Background()
	id := "apr_" + strings.Repeat("a1_.:-Z", approval.MaxIDLen)[:approval.MaxIDLen-4]
	row := make([]byte, approval.MaxRowBytes)
	for i := range row {
		row[i] = byte(i * 7) // every byte value, NUL and invalid UTF-8 included
	}
	must(t, s.Save(ctx, id, nil, row))
	got, err := s.Load(ctx, id)
	must(t, err)
	if !bytes.Equal(got, row) {
		t.Fatalf("a %d-byte row came back as %d bytes, changed", len(row), len(got))
	}
	next := append([]byte(nil), row...)
	next[len(next)-1] ^= 1
	must(t, s.Save(ctx, id, row, next))
	// A prev differing only in its last byte is not the row.
	if err := s.Save(ctx, id, row, row); !errors.Is(err, approval.ErrConflict) {
		t.Fatalf("Save with a prev differing in its last byte = %v, want ErrConflict", err)
	}
	nonce := strings.Repeat("n", approval.MaxNonceLen)
	op := strings.Repeat("o1_.:-Z", approval.MaxOpLen)[:approval.MaxOpLen]
	must(t, s.Consume(ctx, nonce, op))
	if err := s.Consume(ctx, nonce, "op_2"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a second Consume of the longest nonce = %v, want ErrConsumed", err)
	}
	must(t, s.Consume(ctx, nonce, op))
	if err := s.Consume(ctx, nonce[:len(nonce)-1], op[:len(op)-1]); err != nil {
		t.Fatalf("Consume of a nonce one byte shorter: %v", err)
	}
	// The longest operation id is kept exactly: one a byte shorter is
	// another operation.
	if err := s.Consume(ctx, nonce[:len(nonce)-1], op); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("Consume by an operation one byte longer = %v, want ErrConsumed", err)
	}
	must(t, s.Cancel(ctx, nonce, op))
	if err := s.Consume(ctx, nonce, op); !errors.Is(err, approval.ErrCanceled) {
		t.Fatalf("the cancelled longest operation's Consume = %v, want ErrCanceled", err)
	}
	must(t, s.Consume(ctx, nonce, op[:len(op)-1]))
}

// testLookAlikeIDs: ids that differ only in characters some backends
// treat specially are different ids.
func testLookAlikeIDs(t *testing.T, s approval.Store) {
	ctx := context.Background()
	ids := []string{"apr_a", "apr.a", "aprxa", "APR_A", "apr_a:", "apr-a", "apr__a", "apr%a"}
	for _, id := range ids {
		if err := s.Save(ctx, id, nil, []byte("row of "+id)); err != nil {
			t.Fatalf("Save(%q): %v", id, err)
		}
	}
	for _, id := range ids {
		mustLoad(t, s, id, "row of "+id)
	}
	for _, n := range ids {
		must(t, s.Consume(ctx, "n"+n, "op_1"))
	}
	// Look-alike operation ids are different operations.
	for _, op := range ids {
		must(t, s.Cancel(ctx, "n_look", op))
	}
	must(t, s.Consume(ctx, "n_look", "apr_b"))
}

// testBeyondBounds: ids, nonces and rows beyond the bounds, and hostile
// ones, may be refused with an error; what is stored is never confused
// with another id's row, and nothing panics.
func testBeyondBounds(t *testing.T, s approval.Store) {
	ctx := context.Background()
	must(t, s.Save(ctx, "apr_ok", nil, []byte("ok")))
	hostile := []string{
		strings.Repeat("x", 1<<20),
		"apr_ok\x00suffix",
		"apr_ok' OR '1'='1",
		"apr_ok\"; DROP TABLE approvals; --",
		"apr_*", "apr_?", "apr_%",
		"apr_ok\n",
		"\xff\xfe",
		"",
	}
	for i, id := range hostile {
		err := s.Save(ctx, id, nil, []byte("hostile"))
		if errors.Is(err, approval.ErrConflict) && id != "" {
			t.Errorf("Save(%q) conflicted: the store confused it with another id", trim(id))
		}
		if err == nil {
			row, lerr := s.Load(ctx, id)
			if lerr != nil || string(row) != "hostile" {
				t.Errorf("Save(%q) succeeded but Load = %q, %v", trim(id), row, lerr)
			}
		}
		_ = s.Consume(ctx, id, "op_1")
		_ = s.Cancel(ctx, id, "op_2")
		// A hostile operation id is refused or kept apart.
		nonce := fmt.Sprintf("n_hostile_%d", i)
		if err := s.Consume(ctx, nonce, id); err == nil {
			if err := s.Consume(ctx, nonce, "op_other"); !errors.Is(err, approval.ErrConsumed) {
				t.Errorf("a Consume by operation %q succeeded but another's = %v, want ErrConsumed", trim(id), err)
			}
			must(t, s.Cancel(ctx, nonce, id))
			must(t, s.Consume(ctx, nonce, "op_other"))
		}
	}
	mustLoad(t, s, "apr_ok", "ok")
	big := make([]byte, 4*approval.MaxRowBytes)
	if err := s.Save(ctx, "apr_big", nil, big); err == nil {
		row, lerr := s.Load(ctx, "apr_big")
		if lerr != nil || !bytes.Equal(row, big) {
			t.Errorf("an oversize row was accepted and came back changed: %d bytes, %v", len(row), lerr)
		}
	}
	// A cancelled context does not store or consume anything by mistake.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Save(cctx, "apr_cancelled", nil, []byte("x")); err == nil {
		mustLoad(t, s, "apr_cancelled", "x")
	}
	if err := s.Consume(cctx, "n_cancelled", "op_1"); err == nil {
		if err := s.Consume(ctx, "n_cancelled", "op_2"); !errors.Is(err, approval.ErrConsumed) {
			t.Errorf("Consume succeeded under a cancelled context but the nonce is not used: %v", err)
		}
	}
	if err := s.Cancel(cctx, "n_cancelled2", "op_1"); err == nil {
		if err := s.Consume(ctx, "n_cancelled2", "op_1"); !errors.Is(err, approval.ErrCanceled) {
			t.Errorf("Cancel succeeded under a cancelled context but its operation still consumes: %v", err)
		}
	}
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustLoad(t *testing.T, s approval.Store, id, want string) {
	t.Helper()
	got, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	if string(got) != want {
		t.Fatalf("Load(%q) = %q, want %q", id, trim(string(got)), trim(want))
	}
}
