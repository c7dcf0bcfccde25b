package redisstate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/retry"
	"github.com/toolmw/toolmw/store"
)

// The environment of a replica process: the Redis address and when to
// start (unix nanoseconds), so the replicas overlap.
const (
	replicaAddr  = "TOOLMW_TEST_REPLICA_ADDR"
	replicaStart = "TOOLMW_TEST_REPLICA_START"
)

// Settings shared by the replica processes and the test that checks them.
const (
	procLimit     = 100 // calls a second
	procBurst     = 10
	procWindow    = 600 * time.Millisecond
	procCallsEach = 20 // calls to the dead dependency
)

// replicaReport is what a replica process prints.
type replicaReport struct {
	Admitted int64 // rate-limited calls admitted
	First    int64 // unix nanoseconds: the first call's start
	Last     int64 // and the last call's end
	Calls    int64 // calls to the dead dependency
	Attempts int64 // attempts that reached it
	Errors   []string
}

// TestReplicaProcess is one replica process of TestProcessesShareState;
// it does nothing unless that test started it.
func TestReplicaProcess(t *testing.T) {
	addr := os.Getenv(replicaAddr)
	if addr == "" {
		t.Skip("a replica process of TestProcessesShareState")
	}
	start, err := strconv.ParseInt(os.Getenv(replicaStart), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	defer c.Close()
	st, err := redisstate.New(c)
	if err != nil {
		t.Fatal(err)
	}
	var rep replicaReport
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		rep.Errors = append(rep.Errors, err.Error())
		mu.Unlock()
	}

	limited := mustWrap(t, "search", okTool, ratelimit.New(procLimit, procBurst, ratelimit.WithReject(),
		ratelimit.WithStore(st.RateLimits(), store.WithTimeout(calm), store.WithOnError(func(e store.Error) { fail(e.Err) }))))
	bucket := budget.NewAdaptive(budget.WithTokenStore(st.RetryBudget("search-api"),
		store.WithTimeout(calm), store.WithOnError(func(e store.Error) { fail(e.Err) })))
	dep := &dependency{}
	dead := mustWrap(t, "search", dep.tool, retry.New(retry.WithMaxAttempts(3), retry.WithBackoff(0, 0), retry.WithBudget(bucket)))

	time.Sleep(time.Until(time.Unix(0, start)))
	rep.First = time.Now().UnixNano()
	stop := time.Now().Add(procWindow)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if _, err := limited(context.Background(), nil); err == nil {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	rep.Last = time.Now().UnixNano()
	rep.Admitted = admitted.Load()

	for range procCallsEach {
		_, _ = dead(context.Background(), nil)
		rep.Calls++
	}
	_ = bucket.Flush(context.Background())
	rep.Attempts = dep.attempts.Load()
	out, _ := json.Marshal(rep)
	fmt.Printf("REPLICA %s\n", out)
}

// TestProcessesShareState: three replicas as separate processes (this
// test binary, run again) on one redis-server: the calls they admit stay
// within limit × window + burst, and with the dependency down their
// attempts stay within 1.10 × calls + reserve.
func TestProcessesShareState(t *testing.T) {
	if os.Getenv(replicaAddr) != "" {
		t.Skip("in a replica process")
	}
	noLeaks(t)
	srv := startRedis(t)
	start := time.Now().Add(500 * time.Millisecond) // every process started and connected
	var reports []replicaReport
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestReplicaProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(), replicaAddr+"="+srv.Addr(), replicaStart+"="+strconv.FormatInt(start.UnixNano(), 10))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Errorf("replica %d: %v\n%s%s", i, err, stdout.Bytes(), stderr.Bytes())
				return
			}
			for _, line := range bytes.Split(stdout.Bytes(), []byte("\n")) {
				if r, ok := bytes.CutPrefix(line, []byte("REPLICA ")); ok {
					var rep replicaReport
					if err := json.Unmarshal(r, &rep); err != nil {
						t.Errorf("replica %d: %v", i, err)
					}
					mu.Lock()
					reports = append(reports, rep)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(reports) != 3 {
		t.Fatalf("%d replica reports, want 3", len(reports))
	}
	var admitted, calls, attempts int64
	first, last := reports[0].First, reports[0].Last
	for _, r := range reports {
		for _, e := range r.Errors {
			t.Errorf("a replica's store failed: %s", e)
		}
		admitted += r.Admitted
		calls += r.Calls
		attempts += r.Attempts
		first, last = min(first, r.First), max(last, r.Last)
	}
	window := time.Duration(last - first)
	limitBound := int64(procLimit*window.Seconds()) + procBurst
	t.Logf("rate limit: %d admitted by 3 processes in %v (bound %d)", admitted, window, limitBound)
	if admitted > limitBound {
		t.Errorf("%d calls admitted by 3 processes in %v, want at most limit × window + burst = %d", admitted, window, limitBound)
	}
	if admitted < limitBound/2 {
		t.Errorf("%d calls admitted in %v, want about %d", admitted, window, limitBound)
	}
	retryBound := int64(1.10*float64(calls)) + budget.DefaultReserve
	t.Logf("retry budget: %d attempts for %d calls by 3 processes (bound %d)", attempts, calls, retryBound)
	if attempts > retryBound {
		t.Errorf("%d attempts for %d calls by 3 processes, want at most 1.10 × calls + reserve = %d", attempts, calls, retryBound)
	}
}
