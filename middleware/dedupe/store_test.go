package dedupe_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/middleware/dedupe/dedupetest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// replica is one process's view of a tool: its own layer (and so its own
// in-process records), sharing the Store with the other replicas.
func replica(t *testing.T, spec toolmw.Spec, fn toolmw.Tool, opts ...dedupe.Option) toolmw.Tool {
	t.Helper()
	tool, err := toolmw.Wrap(spec, fn, dedupe.New(opts...))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// patient is the store timeout of the tests whose memory store answers at
// once: a minute, so that a loaded machine's scheduling delay never reads
// as an outage. The tests of outages set their own.
var patient = store.WithTimeout(time.Minute)

// named returns a context of the run named id, carrying callID.
func named(id, callID string) context.Context {
	return toolmw.WithCallID(budget.WithRun(context.Background(), budget.WithID(id)), callID)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if te, ok := taxonomy.From(err); !ok || te.Code() != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// TestStoreAcrossReplicas: a call made on one replica is answered from
// its record on another, for results of parts and for typed errors, and
// a call id re-used with other arguments is refused there too.
func TestStoreAcrossReplicas(t *testing.T) {
	s := new(dedupetest.MemStore)
	var runs atomic.Int64
	fn := func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		runs.Add(1)
		if string(args) == `{"refuse":true}` {
			return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "too late to cancel")
		}
		return toolmw.Parts(toolmw.TextPart("booked"), toolmw.ImagePart([]byte{0, 1, 0xff}, "image/png")), nil
	}
	spec := toolmw.Spec{Name: "book"}
	a := replica(t, spec, fn, dedupe.WithStore(s, patient))
	b := replica(t, spec, fn, dedupe.WithStore(s, patient))

	res, err := a(named("run-1", "call_1"), json.RawMessage(`{"x":1}`))
	if err != nil {
		t.Fatal(err)
	}
	again, err := b(named("run-1", "call_1"), json.RawMessage(`{ "x" : 1 }`))
	if err != nil || runs.Load() != 1 {
		t.Fatalf("repeat on the other replica: %v, tool ran %d times", err, runs.Load())
	}
	parts, want := again.AllParts(), res.AllParts()
	if len(parts) != 2 || parts[0].Text != "booked" || string(parts[1].Data) != string(want[1].Data) || parts[1].MIMEType != "image/png" {
		t.Fatalf("repeat got %+v, want %+v", parts, want)
	}

	_, err = a(named("run-1", "call_2"), json.RawMessage(`{"refuse":true}`))
	wantCode(t, err, "booking_not_cancellable")
	_, err = b(named("run-1", "call_2"), json.RawMessage(`{"refuse":true}`))
	wantCode(t, err, "booking_not_cancellable")
	if te, _ := taxonomy.From(err); te.Kind() != taxonomy.KindRefused || runs.Load() != 2 {
		t.Fatalf("recorded refusal: %v (kind %v), tool ran %d times", err, te.Kind(), runs.Load())
	}

	_, err = b(named("run-1", "call_1"), json.RawMessage(`{"x":2}`))
	wantCode(t, err, taxonomy.CodeCallIDReused)
	if _, err := b(named("run-2", "call_1"), json.RawMessage(`{"x":1}`)); err != nil || runs.Load() != 3 {
		t.Fatalf("the same call id in another run: %v, tool ran %d times, want 3", err, runs.Load())
	}
}

// TestStoreRacingReplicas: replicas racing one call run it once, and each
// gets its outcome.
func TestStoreRacingReplicas(t *testing.T) {
	s := new(dedupetest.MemStore)
	var runs atomic.Int64
	release := make(chan struct{})
	fn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		runs.Add(1)
		<-release
		return toolmw.Text("charged once"), nil
	}
	const replicas = 8
	var wg sync.WaitGroup
	errs := make(chan error, replicas)
	for range replicas {
		tool := replica(t, toolmw.Spec{Name: "charge"}, fn, dedupe.WithStore(s, patient))
		wg.Go(func() {
			res, err := tool(named("run-race", "call_pay"), json.RawMessage(`{}`))
			if err == nil && res.Content != "charged once" {
				err = errors.New("got " + res.Content)
			}
			errs <- err
		})
	}
	for s.Calls("claim") < replicas {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("the tool ran %d times, want 1", runs.Load())
	}
}

// TestStoreHolderDied: a record whose holder stopped renewing its lease
// (it died, or lost the Store) is waited for until the lease ends; then a
// call that is not idempotent is told the outcome is unknown without
// running, and an idempotent one runs.
func TestStoreHolderDied(t *testing.T) {
	for _, spec := range []toolmw.Spec{{Name: "pay"}, {Name: "read", Idempotent: true}} {
		t.Run(spec.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := new(dedupetest.MemStore)
				s.Fail("renew", errors.New("the holder lost the store"))
				const lease = 2 * time.Second
				var runs atomic.Int64
				stuck := make(chan struct{})
				holder := replica(t, spec, func(context.Context, json.RawMessage) (toolmw.Result, error) {
					runs.Add(1)
					<-stuck
					return toolmw.Text("late"), nil
				}, dedupe.WithStore(s, patient), dedupe.WithLease(lease))
				go func() { _, _ = holder(named("run-d", "call_1"), json.RawMessage(`{}`)) }()
				synctest.Wait()

				other := replica(t, spec, func(context.Context, json.RawMessage) (toolmw.Result, error) {
					runs.Add(1)
					return toolmw.Text("again"), nil
				}, dedupe.WithStore(s, patient), dedupe.WithLease(lease))
				start := time.Now()
				res, err := other(named("run-d", "call_1"), json.RawMessage(`{}`))
				if waited := time.Since(start); waited < lease-100*time.Millisecond || waited > lease+time.Second {
					t.Errorf("the repeat waited %v for a lease of %v", waited, lease)
				}
				if spec.Idempotent {
					if err != nil || res.Content != "again" || runs.Load() != 2 {
						t.Errorf("idempotent repeat: %q, %v; tool ran %d times, want 2", res.Content, err, runs.Load())
					}
				} else {
					wantCode(t, err, taxonomy.CodeDuplicateInDoubt)
					if runs.Load() != 1 {
						t.Errorf("the tool ran %d times, want 1", runs.Load())
					}
				}
				close(stuck)
				synctest.Wait()
			})
		})
	}
}

// TestStoreLiveHolder: a repeat waits for a holder that renews its lease,
// however long the tool runs, and gets its outcome; its own deadline ends
// its wait.
func TestStoreLiveHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := new(dedupetest.MemStore)
		const lease = time.Second
		var runs atomic.Int64
		finish := make(chan struct{})
		fn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			runs.Add(1)
			<-finish
			return toolmw.Text("done"), nil
		}
		holder := replica(t, toolmw.Spec{Name: "pay"}, fn, dedupe.WithStore(s, patient), dedupe.WithLease(lease))
		go func() { _, _ = holder(named("run-l", "call_1"), json.RawMessage(`{}`)) }()
		synctest.Wait()

		other := replica(t, toolmw.Spec{Name: "pay"}, fn, dedupe.WithStore(s, patient), dedupe.WithLease(lease))
		ctx, cancel := context.WithTimeout(named("run-l", "call_1"), 5*lease)
		_, err := other(ctx, json.RawMessage(`{}`))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a repeat whose deadline passed while the holder ran: %v", err)
		}
		got := make(chan toolmw.Result, 1)
		go func() {
			res, err := other(named("run-l", "call_1"), json.RawMessage(`{}`))
			if err != nil {
				t.Error(err)
			}
			got <- res
		}()
		time.Sleep(20 * lease)
		close(finish)
		if res := <-got; res.Content != "done" || runs.Load() != 1 {
			t.Fatalf("repeat got %q; tool ran %d times, want 1", res.Content, runs.Load())
		}
		if n := s.Calls("renew"); n < 20*3-3 {
			t.Errorf("%d renewals over 20 leases", n)
		}
	})
}

// TestStoreUnknownOutcome: a call that timed out while the tool ran is
// recorded as in doubt: a repeat on another replica does not run it.
func TestStoreUnknownOutcome(t *testing.T) {
	s := new(dedupetest.MemStore)
	var runs atomic.Int64
	fn := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		if runs.Add(1) == 1 {
			<-ctx.Done()
			return toolmw.Result{}, ctx.Err()
		}
		return toolmw.Text("charged"), nil
	}
	a := replica(t, toolmw.Spec{Name: "charge"}, fn, dedupe.WithStore(s, patient))
	ctx, cancel := context.WithCancel(named("run-u", "call_1"))
	cancel()
	if _, err := a(ctx, json.RawMessage(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("first call: %v", err)
	}
	b := replica(t, toolmw.Spec{Name: "charge"}, fn, dedupe.WithStore(s, patient))
	_, err := b(named("run-u", "call_1"), json.RawMessage(`{}`))
	wantCode(t, err, taxonomy.CodeDuplicateInDoubt)
	if runs.Load() != 1 {
		t.Fatalf("the tool ran %d times, want 1", runs.Load())
	}
}

// TestStoreDown: when the Store fails or does not answer within its
// timeout, a call that is not idempotent fails closed without running,
// reported as refused; an idempotent one runs on in-process records,
// marked degraded.
func TestStoreDown(t *testing.T) {
	for _, fault := range []string{"fail", "hang"} {
		t.Run(fault, func(t *testing.T) {
			s := new(dedupetest.MemStore)
			if fault == "fail" {
				s.Fail("claim", errors.New("connection refused"))
			} else {
				s.Hang("claim")
			}
			var reports []store.Error
			var mu sync.Mutex
			onError := store.WithOnError(func(e store.Error) {
				mu.Lock()
				reports = append(reports, e)
				mu.Unlock()
			})
			var runs atomic.Int64
			fn := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
				runs.Add(1)
				return toolmw.Text("ok"), nil
			}
			pay := replica(t, toolmw.Spec{Name: "pay"}, fn, dedupe.WithStore(s, store.WithTimeout(20*time.Millisecond), onError))
			_, err := pay(named("run-o", "call_1"), json.RawMessage(`{}`))
			wantCode(t, err, taxonomy.CodeCallRecordUnavailable)
			if te, _ := taxonomy.From(err); !te.Retryable() || runs.Load() != 0 {
				t.Fatalf("fail closed: retryable %v, tool ran %d times", te.Retryable(), runs.Load())
			}
			var degraded string
			probe := func(next toolmw.Tool) toolmw.Tool { // an observer outside the layer
				return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
					res, err := next(ctx, args)
					c, _ := toolmw.CallFrom(ctx)
					degraded = c.Degraded
					return res, err
				}
			}
			read, err := toolmw.Wrap(toolmw.Spec{Name: "read", Idempotent: true}, fn, probe,
				dedupe.New(dedupe.WithStore(s, store.WithTimeout(20*time.Millisecond), onError)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := read(named("run-o", "call_2"), json.RawMessage(`{}`)); err != nil || runs.Load() != 1 || degraded != "dedupe" {
				t.Fatalf("idempotent call with the store down: %v, ran %d, degraded %q", err, runs.Load(), degraded)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(reports) < 2 || reports[0].Layer != "dedupe" || reports[0].Op != "claim" || !reports[0].Refused {
				t.Fatalf("reports %+v", reports)
			}
		})
	}
}

// corruptStore answers every claim with a done record whose outcome does
// not parse, or a record of another shape.
type corruptStore struct {
	dedupetest.MemStore
	rec dedupe.Record
}

func (c *corruptStore) Claim(context.Context, string, string, dedupe.Claim) (dedupe.Record, error) {
	return c.rec, nil
}

// TestStoreCorrupt: a record that does not parse ends the call as
// call_record_corrupt, without running the tool, reported as refused.
func TestStoreCorrupt(t *testing.T) {
	sum := sha256.Sum256([]byte("{}")) // the digest of the call's arguments
	op, args := "0123456789abcdef0123456789abcdef", hex.EncodeToString(sum[:])
	for name, rec := range map[string]dedupe.Record{
		"garbage outcome": {Op: op, Args: args, Done: true, Outcome: []byte("{not json")},
		"empty outcome":   {Op: op, Args: args, Done: true, Outcome: []byte{}},
		"unknown field":   {Op: op, Args: args, Done: true, Outcome: []byte(`E{"kind":"tool-failed","code":"x","extra":1}`)},
		"trailing data":   {Op: op, Args: args, Done: true, Outcome: []byte(`E{"kind":"tool-failed","code":"x"} {}`)},
		"bad result":      {Op: op, Args: args, Done: true, Outcome: []byte("RTMR1\x00\x05ab")},
		"bad op":          {Op: "x", Args: args, Until: time.Now().Add(time.Hour)},
		"no lease":        {Op: op, Args: args},
	} {
		t.Run(name, func(t *testing.T) {
			var refused atomic.Bool
			s := &corruptStore{rec: rec}
			var runs atomic.Int64
			tool := replica(t, toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
				runs.Add(1)
				return toolmw.Text("ok"), nil
			}, dedupe.WithStore(s, store.WithOnError(func(e store.Error) { refused.Store(e.Refused) })))
			_, err := tool(named("run-c", "call_1"), json.RawMessage(`{}`))
			wantCode(t, err, taxonomy.CodeCallRecordCorrupt)
			if runs.Load() != 0 || !refused.Load() {
				t.Fatalf("tool ran %d times, reported refused %v", runs.Load(), refused.Load())
			}
		})
	}
}

// TestStoreFinishLate: an outcome the Store could not take when the call
// ended reaches it once it answers again; meanwhile a repeat learns the
// outcome is unknown once the lease ends, and never runs the tool.
func TestStoreFinishLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := new(dedupetest.MemStore)
		s.Fail("finish", errors.New("connection reset"))
		const lease = time.Second
		var runs atomic.Int64
		fn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			runs.Add(1)
			return toolmw.Text("charged"), nil
		}
		a := replica(t, toolmw.Spec{Name: "charge"}, fn, dedupe.WithStore(s, patient), dedupe.WithLease(lease))
		b := replica(t, toolmw.Spec{Name: "charge"}, fn, dedupe.WithStore(s, patient), dedupe.WithLease(lease))
		if res, err := a(named("run-f", "call_1"), json.RawMessage(`{}`)); err != nil || res.Content != "charged" {
			t.Fatalf("first call: %q, %v", res.Content, err)
		}
		_, err := b(named("run-f", "call_1"), json.RawMessage(`{}`))
		wantCode(t, err, taxonomy.CodeDuplicateInDoubt)
		s.Fail("finish", nil)
		time.Sleep(2 * store.Rest)
		synctest.Wait()
		if res, err := b(named("run-f", "call_1"), json.RawMessage(`{}`)); err != nil || res.Content != "charged" || runs.Load() != 1 {
			t.Fatalf("after the store came back: %q, %v; ran %d times", res.Content, err, runs.Load())
		}
	})
}

// TestStoreLateClaim: a claim whose answer never arrived, applied by the
// Store afterwards, is released, so a repeat of a call that did not run
// runs it once the store answers again.
func TestStoreLateClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := new(dedupetest.MemStore)
		s.Late("claim", 10*time.Millisecond)
		var runs atomic.Int64
		fn := func(context.Context, json.RawMessage) (toolmw.Result, error) {
			runs.Add(1)
			return toolmw.Text("charged"), nil
		}
		a := replica(t, toolmw.Spec{Name: "charge"}, fn, dedupe.WithStore(s, store.WithTimeout(50*time.Millisecond)))
		_, err := a(named("run-lc", "call_1"), json.RawMessage(`{}`))
		wantCode(t, err, taxonomy.CodeCallRecordUnavailable)
		s.Late("", 0)
		time.Sleep(2 * store.Rest)
		synctest.Wait()
		if s.Len() != 0 {
			t.Fatalf("%d records left by a claim whose call never ran", s.Len())
		}
		if res, err := a(named("run-lc", "call_1"), json.RawMessage(`{}`)); err != nil || res.Content != "charged" || runs.Load() != 1 {
			t.Fatalf("the call made again: %q, %v; ran %d times", res.Content, err, runs.Load())
		}
	})
}

// TestStoreOptions: invalid store options are refused at start-up.
func TestStoreOptions(t *testing.T) {
	for name, opts := range map[string][]dedupe.Option{
		"short lease":      {dedupe.WithLease(time.Millisecond)},
		"negative window":  {dedupe.WithWindow(-time.Second)},
		"window < 2 lease": {dedupe.WithLease(time.Minute), dedupe.WithWindow(90 * time.Second)},
		"store timeout":    {dedupe.WithStore(new(dedupetest.MemStore), store.WithTimeout(-1))},
	} {
		err := dedupe.Validate(opts...)
		wantCode(t, err, taxonomy.CodeOptionInvalid)
		if _, werr := toolmw.Wrap(toolmw.Spec{Name: "x"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Result{}, nil
		}, dedupe.New(opts...)); werr == nil {
			t.Errorf("%s: Wrap accepted it", name)
		}
	}
	if err := dedupe.Validate(dedupe.WithLease(dedupe.MinLease), dedupe.WithWindow(2*dedupe.MinLease), dedupe.WithStore(nil)); err != nil {
		t.Fatal(err)
	}
}

// tamperStore changes the done records it returns with f.
type tamperStore struct {
	*dedupetest.MemStore
	f func(dedupe.Record) dedupe.Record
}

func (s tamperStore) Claim(ctx context.Context, run, key string, c dedupe.Claim) (dedupe.Record, error) {
	rec, err := s.MemStore.Claim(ctx, run, key, c)
	if err == nil && rec.Done {
		rec = s.f(rec)
	}
	return rec, err
}

// TestStoreSealed: with a seal key, a record written with it is read back
// on another replica; one changed, forged without the key, or copied from
// another call is call_record_corrupt, and the tool does not run.
func TestStoreSealed(t *testing.T) {
	key := make([]byte, dedupe.MinKeyLen)
	for i := range key {
		key[i] = byte(i)
	}
	var runs atomic.Int64
	fn := func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		runs.Add(1)
		return toolmw.Text("receipt for " + string(args)), nil
	}
	spec := toolmw.Spec{Name: "pay"}
	s := new(dedupetest.MemStore)
	a := replica(t, spec, fn, dedupe.WithStore(s, patient), dedupe.WithSealKey(key))
	if _, err := a(named("run-s", "call_1"), json.RawMessage(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	if res, err := replica(t, spec, fn, dedupe.WithStore(s, patient), dedupe.WithSealKey(key))(named("run-s", "call_1"), json.RawMessage(`{"n":1}`)); err != nil || res.Content != `receipt for {"n":1}` {
		t.Fatalf("sealed record on another replica: %q, %v", res.Content, err)
	}
	var sealed []byte // call_1's sealed outcome, to copy
	steal := tamperStore{s, func(r dedupe.Record) dedupe.Record { sealed = r.Outcome; return r }}
	_, _ = replica(t, spec, fn, dedupe.WithStore(steal, patient), dedupe.WithSealKey(key))(named("run-s", "call_1"), json.RawMessage(`{"n":1}`))
	// Unsealed records of a replica without the key, and another key's.
	other := append([]byte(nil), key...)
	other[0] ^= 1
	for _, opts := range [][]dedupe.Option{{}, {dedupe.WithSealKey(other)}} {
		w := replica(t, spec, fn, append(opts, dedupe.WithStore(s, patient))...)
		if _, err := w(named("run-s", "call_2"), json.RawMessage(`{"n":2}`)); err != nil {
			t.Fatal(err)
		}
		_, err := a(named("run-s", "call_2"), json.RawMessage(`{"n":2}`))
		wantCode(t, err, taxonomy.CodeCallRecordCorrupt)
		s = new(dedupetest.MemStore)
		a = replica(t, spec, fn, dedupe.WithStore(s, patient), dedupe.WithSealKey(key))
	}
	for name, f := range map[string]func(dedupe.Record) dedupe.Record{
		"changed": func(r dedupe.Record) dedupe.Record {
			r.Outcome = append([]byte(nil), r.Outcome...)
			r.Outcome[len(`{"content":"receipt`)] = 'X'
			return r
		},
		"copied":    func(r dedupe.Record) dedupe.Record { r.Outcome = sealed; return r },
		"truncated": func(r dedupe.Record) dedupe.Record { r.Outcome = r.Outcome[:10]; return r },
	} {
		s := new(dedupetest.MemStore)
		w := replica(t, spec, fn, dedupe.WithStore(s, patient), dedupe.WithSealKey(key))
		if _, err := w(named("run-s", "call_3"), json.RawMessage(`{"n":3}`)); err != nil {
			t.Fatal(err)
		}
		before := runs.Load()
		_, err := replica(t, spec, fn, dedupe.WithStore(tamperStore{s, f}, patient), dedupe.WithSealKey(key))(named("run-s", "call_3"), json.RawMessage(`{"n":3}`))
		if te, ok := taxonomy.From(err); !ok || te.Code() != taxonomy.CodeCallRecordCorrupt || runs.Load() != before {
			t.Errorf("%s: %v; tool ran %d more times", name, err, runs.Load()-before)
		}
	}
	if err := dedupe.Validate(dedupe.WithSealKey(key[:dedupe.MinKeyLen-1])); err == nil {
		t.Error("a short seal key was accepted")
	}
}
