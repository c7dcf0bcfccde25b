package redisstate_test

// The call records when Redis is killed or asleep: no call waits for Redis
// past the store timeout, a non-idempotent call fails closed
// (tool-failed/call_record_unavailable, not run), an idempotent one runs
// on in-process records, marked degraded, and no call id runs twice.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The dedupe layer's settings in the outage tests: the brief's store
// timeout, and a lease longer than a loaded machine's pauses.
const (
	recordTimeout = 100 * time.Millisecond
	recordLease   = time.Second
	// recordBound is how long a call may take while Redis is away: the
	// store timeout, and two seconds for a loaded machine. A call that
	// waited for Redis would take the whole outage (seconds).
	recordBound = recordTimeout + 2*loadSlack
	// callPace is the pause between a driver's calls: a refusal while the
	// store rests takes microseconds.
	callPace = 20 * time.Millisecond
)

// effects counts the runs of the outage tests' tools per call id.
type effects struct {
	mu   sync.Mutex
	runs map[string]int
}

func (e *effects) tool(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	c, _ := toolmw.CallFrom(ctx)
	e.mu.Lock()
	if e.runs == nil {
		e.runs = map[string]int{}
	}
	e.runs[c.ID]++
	e.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	return toolmw.Text("done " + c.ID), nil
}

func (e *effects) of(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[id]
}

// twice returns the call ids that ran more than once.
func (e *effects) twice() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var ids []string
	for id, n := range e.runs {
		if n > 1 {
			ids = append(ids, fmt.Sprintf("%s ×%d", id, n))
		}
	}
	return ids
}

// recordFleet is, per replica, a non-idempotent tool (pay) and an
// idempotent one (lookup), each behind the dedupe layer on the replica's
// Store.
type recordFleet struct {
	pay, lookup []toolmw.Tool
	paid, read  *effects
	reports     atomic.Int64 // store errors reported
}

func newRecordFleet(t *testing.T, replicas []*replica) *recordFleet {
	t.Helper()
	f := &recordFleet{paid: &effects{}, read: &effects{}}
	for _, r := range replicas {
		layer := dedupe.New(dedupe.WithLease(recordLease), dedupe.WithStore(r.Store.CallRecords(),
			store.WithTimeout(recordTimeout), store.WithOnError(func(store.Error) { f.reports.Add(1) })))
		pay, err := toolmw.Wrap(toolmw.Spec{Name: "pay"}, f.paid.tool, recordDegraded, layer)
		if err != nil {
			t.Fatal(err)
		}
		lookup, err := toolmw.Wrap(toolmw.Spec{Name: "lookup", Idempotent: true}, f.read.tool, recordDegraded, layer)
		if err != nil {
			t.Fatal(err)
		}
		f.pay, f.lookup = append(f.pay, pay), append(f.lookup, lookup)
	}
	return f
}

// recordCall is one call made by the outage tests.
type recordCall struct {
	id          string
	start, end  time.Time
	err         error
	degraded    string
	ranBefore   int // the tool's runs of the id before and after
	ranAfter    int
	idempotent  bool
	replicaUsed int
}

func (c recordCall) took() time.Duration { return c.end.Sub(c.start) }

// unavailable reports whether err is tool-failed/call_record_unavailable.
func unavailable(err error) bool {
	info := taxonomy.InfoOf(err)
	return err != nil && info.Kind == taxonomy.KindFailed && info.Code == taxonomy.CodeCallRecordUnavailable
}

// call makes the call id of run "run-outage" on replica i, idempotent or
// not, with a deadline far past recordBound: a call that waited for Redis
// shows in its time.
func (f *recordFleet) call(i int, idempotent bool, id string) recordCall {
	tool, fx := f.pay[i], f.paid
	if idempotent {
		tool, fx = f.lookup[i], f.read
	}
	c := recordCall{id: id, idempotent: idempotent, replicaUsed: i}
	ctx := toolmw.WithCallID(budget.WithRun(context.Background(), budget.WithID("run-outage")), id)
	ctx = context.WithValue(ctx, degradedKey{}, &c.degraded)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c.ranBefore = fx.of(id)
	c.start = time.Now()
	_, c.err = tool(ctx, nil)
	c.end = time.Now()
	c.ranAfter = fx.of(id)
	return c
}

// warmRecords makes a call of each tool on each replica until it is
// recorded: the connections open and the scripts loaded.
func (f *recordFleet) warm(t *testing.T) {
	t.Helper()
	for i := range f.pay {
		for _, idem := range []bool{false, true} {
			warm(t, func(try int) error {
				c := f.call(i, idem, fmt.Sprintf("warm-%d-%v-%d", i, idem, try))
				if c.err == nil && c.degraded != "" {
					return fmt.Errorf("degraded: %s", c.degraded)
				}
				return c.err
			})
		}
	}
	time.Sleep(300 * time.Millisecond) // past the rest of a warm-up call that timed out
}

// checkOutageCall fails the test unless c, made while Redis was away,
// ended within recordBound and was decided as an outage decides: a
// non-idempotent call refused (call_record_unavailable) without running,
// an idempotent one answered on in-process records (run, or its repeat
// given the in-process record), marked degraded.
func checkOutageCall(t *testing.T, c recordCall) {
	t.Helper()
	if c.took() > recordBound {
		t.Errorf("call %s took %v while Redis was away, want at most the store timeout %v (+ %v for a loaded machine)",
			c.id, c.took(), recordTimeout, recordBound-recordTimeout)
	}
	switch {
	case !c.idempotent && (!unavailable(c.err) || c.ranAfter != c.ranBefore):
		t.Errorf("pay %s while Redis was away: %v, ran %d times; want call_record_unavailable, not run", c.id, c.err, c.ranAfter-c.ranBefore)
	case c.idempotent && (c.err != nil || c.ranAfter > c.ranBefore+1 || !strings.Contains(c.degraded, "dedupe")):
		t.Errorf("lookup %s while Redis was away: %v, ran %d times, degraded %q; want it answered, degraded by dedupe",
			c.id, c.err, c.ranAfter-c.ranBefore, c.degraded)
	}
}

// TestCallRecordsRedisKilled: redis-server killed while two replicas make
// calls, each call id twice: no call waits past the store timeout, no call
// id runs twice, the non-idempotent calls fail closed while Redis is down
// (call_record_unavailable: none runs, a call that ran before is not run
// again) and the idempotent ones run degraded; once Redis is back the
// calls are recorded on it again.
func TestCallRecordsRedisKilled(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 2)
	f := newRecordFleet(t, replicas)
	f.warm(t)

	var down atomic.Bool
	var mu sync.Mutex
	var during []recordCall
	var all []recordCall
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		for _, idem := range []bool{false, true} {
			wg.Go(func() {
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					id := fmt.Sprintf("mid-%d-%v-%d", i, idem, n)
					for range 2 { // the call and its repeat
						wasDown := down.Load()
						c := f.call(i, idem, id)
						mu.Lock()
						all = append(all, c)
						if wasDown {
							during = append(during, c)
						}
						mu.Unlock()
						time.Sleep(callPace)
					}
				}
			})
		}
	}
	time.Sleep(300 * time.Millisecond)
	paidBefore := "mid-0-false-0"
	srv.Kill()
	down.Store(true)
	time.Sleep(800 * time.Millisecond)
	// A call made before the kill, repeated while Redis is down: refused,
	// not run again.
	again := f.call(0, false, paidBefore)
	close(stop)
	wg.Wait()

	if f.paid.of(paidBefore) != 1 || !unavailable(again.err) || again.ranAfter != 1 {
		t.Errorf("pay %s, made before the kill, repeated while Redis is down: %v, runs %d; want call_record_unavailable, one run",
			paidBefore, again.err, again.ranAfter)
	}
	var slowest time.Duration
	refused, degraded := 0, 0
	for _, c := range all {
		slowest = max(slowest, c.took())
		if c.took() > recordBound {
			t.Errorf("call %s took %v, want at most %v", c.id, c.took(), recordBound)
		}
		if c.idempotent && c.err != nil {
			t.Errorf("lookup %s failed: %v", c.id, c.err)
		}
		if !c.idempotent && c.err != nil && !unavailable(c.err) {
			t.Errorf("pay %s failed: %v, want a result or call_record_unavailable", c.id, c.err)
		}
	}
	for _, c := range during {
		checkOutageCall(t, c)
		if c.idempotent {
			degraded++
		} else {
			refused++
		}
	}
	if ids := f.paid.twice(); len(ids) > 0 {
		t.Errorf("pay call ids run more than once: %v", ids)
	}
	t.Logf("%d calls, the slowest %v; while Redis was down %d pay calls refused, %d lookups run degraded; %d store errors reported",
		len(all), slowest, refused, degraded, f.reports.Load())
	if refused == 0 || degraded == 0 {
		t.Fatalf("while Redis was down: %d pay calls, %d lookups; want some of each", refused, degraded)
	}

	// Back: a new call is recorded on Redis again (go-redis redials a
	// failed pool about once a second).
	srv.Restart()
	back := time.Now()
	for n := 0; ; n++ {
		id := fmt.Sprintf("back-%d", n)
		c := f.call(1, false, id)
		if c.err == nil {
			if c.ranAfter != 1 {
				t.Fatalf("pay %s after Redis came back ran %d times", id, c.ranAfter)
			}
			// Its repeat on the other replica, once that one asks Redis
			// again: the recorded result, not a second run.
			for {
				again := f.call(0, false, id)
				if f.paid.of(id) != 1 {
					t.Fatalf("the repeat of pay %s on the other replica ran it again", id)
				}
				if again.err == nil {
					break
				}
				if !unavailable(again.err) || time.Since(back) > recoverWithin {
					t.Fatalf("the repeat of pay %s on the other replica: %v", id, again.err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			break
		}
		if !unavailable(c.err) || c.ranAfter != 0 {
			t.Fatalf("pay %s after Redis came back: %v, ran %d times", id, c.err, c.ranAfter)
		}
		if time.Since(back) > recoverWithin {
			t.Fatalf("pay calls still refused %v after Redis came back: %v", time.Since(back), c.err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("recorded on Redis again %v after it came back", time.Since(back))
}

// TestCallRecordsRedisAsleep: Redis asleep (DEBUG SLEEP 3) while two
// replicas make calls with a store timeout of 100 ms: every call made
// while it sleeps ends within the timeout (plus a loaded machine's
// slack), the non-idempotent ones refused (call_record_unavailable, not
// run), the idempotent ones run degraded. The claims Redis runs late,
// when it wakes, run nothing: a repeat of each call afterwards runs it at
// most once.
func TestCallRecordsRedisAsleep(t *testing.T) {
	noLeaks(t)
	srv := startRedis(t)
	replicas := newReplicas(t, srv, 2)
	f := newRecordFleet(t, replicas)
	f.warm(t)

	const sleep = 3 * time.Second
	sleeper := srv.Client()
	woke := make(chan time.Time, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), sleep+30*time.Second)
		defer cancel()
		if err := sleeper.Do(ctx, "DEBUG", "SLEEP", fmt.Sprint(sleep.Seconds())).Err(); err != nil {
			t.Errorf("DEBUG SLEEP: %v", err)
		}
		woke <- time.Now()
	}()
	// Wait until Redis sleeps: a ping gets no answer.
	probe := srv.Client()
	for deadline := time.Now().Add(sleep / 2); ; time.Sleep(5 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := probe.Ping(ctx).Err()
		cancel()
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Redis still answers pings after DEBUG SLEEP")
		}
	}
	asleep := time.Now()
	var calls []recordCall
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range replicas {
		for _, idem := range []bool{false, true} {
			wg.Go(func() {
				for n := 0; time.Since(asleep) < sleep/2; n++ {
					c := f.call(i, idem, fmt.Sprintf("asleep-%d-%v-%d", i, idem, n))
					mu.Lock()
					calls = append(calls, c)
					mu.Unlock()
					time.Sleep(callPace)
				}
			})
		}
	}
	wg.Wait()
	wake := <-woke

	var slowest time.Duration
	checked := 0
	for _, c := range calls {
		slowest = max(slowest, c.took())
		if c.took() > recordBound {
			t.Errorf("call %s took %v while Redis slept, want at most %v", c.id, c.took(), recordBound)
		}
		if c.end.Before(wake) {
			checkOutageCall(t, c)
			checked++
		}
	}
	t.Logf("%d calls while Redis slept %v (%d ended before it woke), the slowest %v", len(calls), wake.Sub(asleep), checked, slowest)
	if checked == 0 {
		t.Fatal("no call ended while Redis slept")
	}

	// Redis ran the claims sent while it slept when it woke; the layers
	// release them (eventually). A repeat of each non-idempotent call,
	// once its replica reaches Redis again, runs it once, or learns its
	// outcome is unknown (a late claim not released): never twice.
	ran, inDoubt := 0, 0
	for _, c := range calls {
		if c.idempotent {
			continue
		}
		for {
			r := f.call(c.replicaUsed, false, c.id)
			if unavailable(r.err) && time.Since(wake) < recoverWithin {
				time.Sleep(50 * time.Millisecond) // the replica redials Redis
				continue
			}
			switch info := taxonomy.InfoOf(r.err); {
			case r.err == nil:
				ran++
			case info.Code == taxonomy.CodeDuplicateInDoubt:
				inDoubt++
			default:
				t.Fatalf("the repeat of pay %s after Redis woke: %v", c.id, r.err)
			}
			break
		}
	}
	if ids := f.paid.twice(); len(ids) > 0 {
		t.Errorf("pay call ids run more than once: %v", ids)
	}
	t.Logf("repeats after Redis woke: %d ran, %d in doubt (a late claim not yet released when its lease ended)", ran, inDoubt)
}
