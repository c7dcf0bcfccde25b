package redisstate_test

// The Store on a real Redis Cluster (cluster_server_test.go): the client
// settings New accepts, a fresh client's first calls, one slow node, and a
// master killed under load.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/runlimit"
	"github.com/toolmw/toolmw/middleware/spend"
	"github.com/toolmw/toolmw/store"
)

// TestClusterClientOptions: New refuses, with a *ClientOptionError naming
// the option, a ClusterClient that would hold calls past their deadlines,
// and accepts the fleet's settings; a Sentinel client (NewUniversalClient
// with a MasterName) is accepted with ContextTimeoutEnabled and refused
// without.
func TestClusterClientOptions(t *testing.T) {
	addrs := []string{"127.0.0.1:1"}
	cluster := func(f func(*redis.ClusterOptions)) redis.UniversalClient {
		o := fleetClusterOptions(addrs)
		f(o)
		c := redis.NewClusterClient(o)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	sentinel := func(timeouts bool) redis.UniversalClient {
		c := redis.NewUniversalClient(&redis.UniversalOptions{MasterName: "mymaster", Addrs: addrs, ContextTimeoutEnabled: timeouts})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	cases := []struct {
		name   string
		client redis.UniversalClient
		want   string // the option named by the error; "" means accepted
	}{
		{"fleet settings", cluster(func(*redis.ClusterOptions) {}), ""},
		{"routing policies", cluster(func(o *redis.ClusterOptions) { o.DisableRoutingPolicies = false }), "DisableRoutingPolicies: true"},
		{"no context timeouts", cluster(func(o *redis.ClusterOptions) { o.ContextTimeoutEnabled = false }), "ContextTimeoutEnabled: true"},
		{"read only", cluster(func(o *redis.ClusterOptions) { o.ReadOnly = true }), "ReadOnly"},
		{"route by latency", cluster(func(o *redis.ClusterOptions) { o.RouteByLatency = true }), "ReadOnly"},
		{"route randomly", cluster(func(o *redis.ClusterOptions) { o.RouteRandomly = true }), "ReadOnly"},
		{"universal, cluster", redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"127.0.0.1:1", "127.0.0.1:2"},
			ContextTimeoutEnabled: true}), "DisableRoutingPolicies: true"},
		{"sentinel", sentinel(true), ""},
		{"sentinel without context timeouts", sentinel(false), "ContextTimeoutEnabled: true"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.client.Close()
			s, err := redisstate.New(tc.client)
			if tc.want == "" {
				if err != nil || s == nil {
					t.Fatalf("New = %v, %v; want a Store", s, err)
				}
				return
			}
			var oe *redisstate.ClientOptionError
			if !errors.As(err, &oe) || !strings.Contains(oe.Option, tc.want) || s != nil {
				t.Fatalf("New = %v, %v; want a *ClientOptionError naming %q", s, err, tc.want)
			}
		})
	}
}

// clusterReplica is one replica of a fleet on a cluster: its own
// ClusterClient, with the settings New accepts, and Store.
type clusterReplica struct {
	Client *redis.ClusterClient
	Store  *redisstate.Store
}

// acceptedClusterClient returns a new ClusterClient of the cluster with
// the settings New accepts, and its Store: plain options
// (ContextTimeoutEnabled only) if New takes them, else the fleet's
// (fleetClusterOptions). Before New checked the routing options, it took
// the plain ones, and the tests using this ran on them.
func acceptedClusterClient(t *testing.T, c *redisCluster, opts ...redisstate.Option) *clusterReplica {
	t.Helper()
	plain := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), ContextTimeoutEnabled: true})
	if st, err := redisstate.New(plain, opts...); err == nil {
		t.Cleanup(func() { _ = plain.Close() })
		return &clusterReplica{Client: plain, Store: st}
	}
	_ = plain.Close()
	cc := c.Client()
	st, err := redisstate.New(cc, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return &clusterReplica{Client: cc, Store: st}
}

// TestClusterFirstCalls: the first calls of 24 new ClusterClients, made
// with the settings New accepts, while three of the cluster's six nodes
// (the replicas) are stalled, end within the store timeout (plus the slack
// of a loaded machine). Each client has its slot map (loaded before the
// stall, with no command) and sends its first command. A client made
// without DisableRoutingPolicies first fetches its command table (COMMAND)
// from one of three random nodes of the six, with a 5 s timeout of its own
// and under a lock every command takes: for half the clients a stalled
// node, and their calls wait 5 s.
func TestClusterFirstCalls(t *testing.T) {
	noLeaks(t)
	c := startCluster(t, stableNodeTimeout)
	const clients = 24
	const timeout = storeTimeout
	var tools []toolmw.Tool
	for range clients {
		r := acceptedClusterClient(t, c)
		ctx, cancel := context.WithTimeout(context.Background(), calm)
		_, err := r.Client.MasterForKey(ctx, "k") // the slot map, without a command
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, mustWrap(t, "search", okTool, recordDegraded, ratelimit.New(1e6, 1e6,
			ratelimit.WithStore(r.Store.RateLimits(), store.WithTimeout(timeout)))))
	}
	replicas := mapValues(c.Initial.replica)
	for _, n := range c.Nodes {
		if slices.Contains(replicas, n.Addr()) {
			n.Stall()
		}
	}
	type result struct {
		took     time.Duration
		degraded string
		err      error
	}
	results := make([]result, clients)
	var wg sync.WaitGroup
	for i, tool := range tools {
		wg.Go(func() {
			var degraded string
			ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), degradedKey{}, &degraded), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err := tool(ctx, nil)
			results[i] = result{time.Since(start), degraded, err}
		})
	}
	wg.Wait()
	var slowest time.Duration
	slow, degraded := 0, 0
	for i, r := range results {
		slowest = max(slowest, r.took)
		if r.err != nil {
			t.Errorf("client %d: the first call failed: %v", i, r.err)
		}
		if r.took > timeout+loadSlack {
			slow++
		}
		if r.degraded != "" {
			degraded++
		}
	}
	t.Logf("first calls of %d new clients: the slowest %v; %d fell back", clients, slowest, degraded)
	if slow > 0 {
		t.Errorf("%d of %d first calls took more than the store timeout %v (+ %v for a loaded machine); the slowest %v",
			slow, clients, timeout, loadSlack, slowest)
	}
}

func mapValues(m map[string]string) []string {
	var v []string
	for _, x := range m {
		v = append(v, x)
	}
	return v
}

// degradedKey carries, in a call's context, where the driver's outermost
// middleware writes the call's Degraded mark.
type degradedKey struct{}

// recordDegraded is the outermost middleware of the drivers' stacks: it
// writes the call's Degraded mark (toolmw.CallFrom) where the context
// says.
func recordDegraded(next toolmw.Tool) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		res, err := next(ctx, args)
		if p, ok := ctx.Value(degradedKey{}).(*string); ok {
			c, _ := toolmw.CallFrom(ctx)
			*p = c.Degraded
		}
		return res, err
	}
}

// runLimited returns a replica's tool limited per run on its Store's
// RunCalls (wide enough never to refuse), with timeout as the store
// timeout, reporting the store's errors to onErr.
func runLimited(t *testing.T, st *redisstate.Store, timeout time.Duration, onErr func(store.Error)) toolmw.Tool {
	return mustWrap(t, "search", okTool, recordDegraded, runlimit.New(runlimit.Max("search", runlimit.MaxCalls),
		runlimit.WithStore(st.RunCalls(), store.WithTimeout(timeout), store.WithOnError(onErr))))
}

// runCall is one call a driver made.
type runCall struct {
	Replica    int
	ID         string // the run
	Start, End time.Time
	Degraded   string
	Err        error
}

// runDriver calls each replica's tool for each run, each pair on a
// goroutine of its own, in a loop, until stopped.
type runDriver struct {
	mu    sync.Mutex
	calls []runCall
	done  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// driveRuns starts calling tools[i] (replica i) in every run of ids, each
// call with deadline, pausing pace between the calls of one pair. The
// test's cleanup stops it.
func driveRuns(t *testing.T, tools []toolmw.Tool, ids []string, deadline, pace time.Duration) *runDriver {
	d := &runDriver{done: make(chan struct{})}
	t.Cleanup(func() { d.Stop() })
	for i, tool := range tools {
		for _, id := range ids {
			run := budget.NewRun(budget.WithID(id))
			d.wg.Go(func() {
				for {
					select {
					case <-d.done:
						return
					default:
					}
					var degraded string
					ctx, cancel := context.WithTimeout(budget.ContextWithRun(context.Background(), run), deadline)
					ctx = context.WithValue(ctx, degradedKey{}, &degraded)
					start := time.Now()
					_, err := tool(ctx, nil)
					end := time.Now()
					cancel()
					d.mu.Lock()
					d.calls = append(d.calls, runCall{Replica: i, ID: id, Start: start, End: end, Degraded: degraded, Err: err})
					d.mu.Unlock()
					time.Sleep(pace)
				}
			})
		}
	}
	return d
}

// Calls returns the calls made so far.
func (d *runDriver) Calls() []runCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

// Stop stops the callers, waits for them and returns every call made.
func (d *runDriver) Stop() []runCall {
	d.once.Do(func() { close(d.done) })
	d.wg.Wait()
	return d.Calls()
}

// storeErrors counts the store errors reported, and those that said they
// were partial outages.
type storeErrors struct {
	n, partial atomic.Int64
	resting    atomic.Int64 // errors matching ErrNodeResting
	named      atomic.Int64 // of those, errors naming an address
	last       atomic.Value // string
	lastWhole  atomic.Value // string: the last error that did not say it was partial
	// short counts the errors that were not partial because the call's
	// own deadline left the operation less than the time a node may take
	// before it is called slow (nodeFault): on a loaded machine a call
	// may reach the stalled node with little of its deadline left, and
	// such a timeout blames the call, not the node.
	short atomic.Int64
}

func (s *storeErrors) report(e store.Error) {
	s.n.Add(1)
	var p interface{ PartialOutage() bool }
	if errors.As(e.Err, &p) && p.PartialOutage() {
		s.partial.Add(1)
	} else if errors.Is(e.Err, context.DeadlineExceeded) {
		s.short.Add(1)
	} else {
		s.lastWhole.Store(fmt.Sprintf("%s (refused %v): %v", e.Op, e.Refused, e.Err))
	}
	if errors.Is(e.Err, redisstate.ErrNodeResting) {
		s.resting.Add(1)
		if strings.Contains(e.Err.Error(), "127.0.0.1") {
			s.named.Add(1)
		}
	}
	s.last.Store(e.Op + ": " + e.Err.Error())
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}

// clusterMasters returns the masters of the map, in a stable order.
func clusterMasters(c *redisCluster, m *slotMap) []*redisProc {
	var out []*redisProc
	for _, n := range c.Nodes {
		if slices.Contains(m.master[:], n.Addr()) {
			out = append(out, n)
		}
	}
	return out
}

// TestClusterSlowNode: one master of three stalled (SIGSTOP; the cluster's
// node timeout is longer than the stall, so it is not failed over): the
// calls of three replicas whose runs' keys the other masters serve are
// never degraded, while those on the stalled master's keys fall back
// within the store timeout (plus the slack of a loaded machine), reported
// as partial outages; once it continues, its runs use Redis again.
//
// The store timeout is nodeStoreTimeout (1 s), so that a call that fell
// back on a healthy node is the test's failure, not the load's.
func TestClusterSlowNode(t *testing.T) {
	noLeaks(t)
	c := startCluster(t, stableNodeTimeout)
	m := c.Initial
	masters := clusterMasters(c, m)
	slowNode := masters[0]
	slowIDs := namesOn(m, slowNode, "calls:", "slow", 3)
	var fineIDs []string
	for _, mm := range masters[1:] {
		fineIDs = append(fineIDs, namesOn(m, mm, "calls:", "fine", 3)...)
	}
	const timeout = nodeStoreTimeout
	// Every replica has its connections and its slot map before the stall.
	errs, tools, stores := clusterFleet(t, c, append(slices.Clone(slowIDs), fineIDs...))
	late := newLateLimits(t, stores, m, slowNode)
	before := errs.n.Load()

	resume := slowNode.Stall()
	late.stalled(t)
	stalled := time.Now()
	d := driveRuns(t, tools, append(slices.Clone(slowIDs), fineIDs...), nodeCallDeadline, 5*time.Millisecond)
	time.Sleep(timeout + 2*loadSlack) // each slow run falls back at least once
	resume()
	resumed := time.Now()
	calls := d.Stop()

	var fine, fineDegraded, slow, slowDegraded int
	var slowest time.Duration
	for _, call := range calls {
		if call.Err != nil {
			t.Errorf("replica %d, run %s: a call failed: %v", call.Replica, call.ID, call.Err)
		}
		if !call.Start.After(stalled) || call.End.After(resumed) {
			continue // not wholly within the stall
		}
		if slices.Contains(slowIDs, call.ID) {
			slow++
			if call.Degraded != "" {
				slowDegraded++
			}
			slowest = max(slowest, call.End.Sub(call.Start))
			continue
		}
		fine++
		if call.Degraded != "" {
			fineDegraded++
			if fineDegraded <= 3 {
				t.Errorf("replica %d, run %s on a healthy master: the call was degraded (%s) %v into the stall",
					call.Replica, call.ID, call.Degraded, call.Start.Sub(stalled))
			}
		}
	}
	t.Logf("during the %v stall: %d calls on the healthy masters (%d degraded), %d on the stalled one (%d degraded, the slowest %v); %d store errors, %d partial outages",
		resumed.Sub(stalled), fine, fineDegraded, slow, slowDegraded, slowest, errs.n.Load()-before, errs.partial.Load())
	if fineDegraded > 0 {
		t.Errorf("%d of %d calls on the healthy masters were degraded while one master was stalled", fineDegraded, fine)
	}
	if fine < 3*len(fineIDs) {
		t.Errorf("%d calls on the healthy masters during the stall, want at least one a run and replica", fine)
	}
	if slow == 0 || slowDegraded != slow {
		t.Errorf("%d of %d calls on the stalled master were degraded, want all (and some)", slowDegraded, slow)
	}
	if slowest > timeout+loadSlack {
		t.Errorf("a call on the stalled master took %v, want the store timeout %v (+ %v for a loaded machine)", slowest, timeout, loadSlack)
	}
	if n := errs.n.Load() - before; n == 0 || errs.partial.Load() == 0 || errs.partial.Load()+errs.short.Load() != n {
		t.Errorf("%d store errors, %d of them partial outages, %d timeouts of calls short of time: want some, all partial but those (the last: %v; the last of neither: %v)",
			n, errs.partial.Load(), errs.short.Load(), errs.last.Load(), errs.lastWhole.Load())
	}
	if errs.resting.Load() == 0 || errs.named.Load() != 0 {
		t.Errorf("%d calls refused at once for a resting node, %d of the errors naming an address: want some, none", errs.resting.Load(), errs.named.Load())
	}

	late.resumed(t, c.Client())

	// Continued, the stalled master serves its runs again.
	for _, tool := range tools {
		for _, id := range slowIDs {
			ctx := budget.ContextWithRun(context.Background(), budget.NewRun(budget.WithID(id)))
			deadline := time.Now().Add(recoverWithin)
			for {
				var degraded string
				_, err := tool(context.WithValue(ctx, degradedKey{}, &degraded), nil)
				if err == nil && degraded == "" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("run %s still degraded %v after the master continued (%v)", id, recoverWithin, errs.last.Load())
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	}
}

// clusterFleet returns three replicas of the fleet, each with its own
// ClusterClient and Store and a runLimited tool on it with the store
// timeout nodeStoreTimeout, reporting to errs; each tool has made a call in
// every run of ids, so that every replica has its connections and its slot
// map.
func clusterFleet(t *testing.T, c *redisCluster, ids []string) (errs *storeErrors, tools []toolmw.Tool, stores []*redisstate.Store) {
	t.Helper()
	errs = &storeErrors{}
	for range 3 {
		r := acceptedClusterClient(t, c)
		stores = append(stores, r.Store)
		tools = append(tools, runLimited(t, r.Store, nodeStoreTimeout, errs.report))
	}
	for _, tool := range tools {
		for _, id := range ids {
			ctx := budget.ContextWithRun(context.Background(), budget.NewRun(budget.WithID(id)))
			warm(t, func(int) error { _, err := tool(ctx, nil); return err })
		}
	}
	return errs, tools, stores
}

// The bounds of TestClusterFailover.
const (
	// nodeStoreTimeout is the store timeout of the tests that kill or stall
	// a node: a loaded machine's slack, so that a healthy node answers in
	// time however busy the machine (with -race next to two CPU hogs a
	// 50 ms timeout expires now and then on a healthy node, and a fallback
	// would be the load's, not the fault's). The faults they make fail
	// calls at once (a refused connection, CLUSTERDOWN, a resting node)
	// or never answer (a stalled node), so the timeout changes nothing else.
	// nodeCallDeadline is their calls' deadline, longer still.
	nodeStoreTimeout = loadSlack
	nodeCallDeadline = nodeStoreTimeout + 2*loadSlack

	// failoverResume is how long after the cluster is ok again (every live
	// node says cluster_state:ok and the dead master's slots are served by
	// its promoted replica) the fleet may still fall back on those slots.
	failoverResume = 2 * time.Second
	// approvalLag is how long before the kill an approval's write may have
	// been acknowledged and still be lost: Redis replicates asynchronously,
	// and a master killed between answering a write and sending it to its
	// replica loses it. On 127.0.0.1 that is microseconds; a loaded machine
	// may pause the master between the two.
	approvalLag = 100 * time.Millisecond
)

// TestClusterFailover: a master of the cluster killed (SIGKILL) while
// three replicas, each with its own ClusterClient, call runs on every
// master and write approvals on the killed master's slots. Its replica is
// promoted (cluster-node-timeout 2 s); within failoverResume of the
// cluster being ok again, no replica falls back on its slots any more and
// approvals are written again; no call outlasts the store timeout (plus a
// loaded machine's slack); no approval written before the kill is lost.
//
// Without the Store's reload of the slot map on a node's failure, each
// client sends the dead master's slots to its dead address until its
// periodic reload (60 s): the calls fall back for about a minute.
func TestClusterFailover(t *testing.T) {
	noLeaks(t)
	c := startCluster(t, failoverNodeTimeout)
	m := c.Initial
	masters := clusterMasters(c, m)
	victim := masters[0]
	victimIDs := namesOn(m, victim, "calls:", "victim", 3)
	var otherIDs []string
	for _, mm := range masters[1:] {
		otherIDs = append(otherIDs, namesOn(m, mm, "calls:", "other", 2)...)
	}

	errs, tools, stores := clusterFleet(t, c, append(slices.Clone(victimIDs), otherIDs...))

	// The approval writers: each replica writes new approvals on the
	// victim's slots, one every 2 ms, and keeps those acknowledged.
	type saved struct {
		id  string
		at  time.Time
		row []byte
	}
	var aprMu sync.Mutex
	var acked []saved
	var aprLastErr atomic.Int64 // unix nanoseconds: when the last write that failed began
	var aprErr atomic.Value     // the last error, its text
	aprDone := make(chan struct{})
	var aprWG sync.WaitGroup
	// newID returns the next approval id whose key the victim serves.
	var idMu sync.Mutex
	var idN int
	newID := func() string {
		idMu.Lock()
		defer idMu.Unlock()
		for {
			id := "apr-" + strconv.Itoa(idN)
			idN++
			if servedBy(m, storeKey("toolmw:", "apr:", id)) == victim.Addr() {
				return id
			}
		}
	}
	for i, st := range stores {
		a := st.Approvals()
		aprWG.Go(func() {
			for {
				select {
				case <-aprDone:
					return
				default:
				}
				id := newID()
				row := fmt.Appendf(nil, "row of %s by replica %d", id, i)
				// Bounded by nodeStoreTimeout, as the calls are: with
				// store.DefaultTimeout (50 ms) a write to a healthy node
				// expires now and then on a loaded machine. A failure
				// counts from when its write began.
				began := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), nodeStoreTimeout)
				err := a.Save(ctx, id, nil, row)
				cancel()
				if err != nil {
					aprLastErr.Store(began.UnixNano())
					aprErr.Store(fmt.Sprintf("%v (took %v)", err, time.Since(began).Round(time.Millisecond)))
				} else {
					aprMu.Lock()
					acked = append(acked, saved{id, time.Now(), row})
					aprMu.Unlock()
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	t.Cleanup(func() {
		select {
		case <-aprDone:
		default:
			close(aprDone)
		}
		aprWG.Wait()
	})

	// The limits: a tool declared Once and one costing 0.4 under a limit
	// of 1 per replica, on runs the victim serves, each run's first call
	// made (and replicated) before the kill, then called on every replica
	// through the failover.
	lim := newLimitsFleet(t, stores, m, victim)

	d := driveRuns(t, tools, append(slices.Clone(victimIDs), otherIDs...), nodeCallDeadline, 5*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	stopLimits := lim.drive()
	killed := time.Now()
	victim.Kill()

	// The cluster fails the victim over: wait until the live nodes agree
	// that it is ok again, its slots served by its former replica. That
	// takes the node timeout and an election, a few seconds; on a machine
	// loaded to starvation an election may fail for want of votes, and the
	// next comes several seconds later.
	var okAt time.Time
	for deadline := killed.Add(90 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if mm, why := c.ok(false); why == "" && mm.master[keySlot(storeKey("toolmw:", "calls:", victimIDs[0]))] == m.replica[victim.Addr()] {
			okAt = time.Now()
			break
		}
		if time.Now().After(deadline) {
			_, why := c.ok(false)
			for _, n := range c.Nodes {
				t.Logf("the log of %s:\n%s", n.Addr(), lastLines(n.Log(), 30))
			}
			t.Fatalf("the cluster did not fail the killed master over within 90 s: %s", why)
		}
	}
	time.Sleep(failoverResume + time.Second)
	calls := d.Stop()
	stopLimits()
	close(aprDone)
	aprWG.Wait()
	lim.check(t)

	// Resumed: the last call on the victim's slots that fell back, per
	// replica, and the calls after it.
	t.Logf("the cluster was ok again %v after the kill", okAt.Sub(killed))
	var slowest time.Duration
	lastDegraded := make([]time.Time, len(tools))
	okAfter := make([]int, len(tools))
	var otherFirst, otherLast time.Time // the calls on the other masters that fell back
	otherDegraded := 0
	for _, call := range calls {
		if call.Err != nil {
			t.Errorf("replica %d, run %s: a call failed: %v", call.Replica, call.ID, call.Err)
		}
		slowest = max(slowest, call.End.Sub(call.Start))
		if !slices.Contains(victimIDs, call.ID) {
			if call.Degraded != "" {
				otherDegraded++
				if otherFirst.IsZero() || call.Start.Before(otherFirst) {
					otherFirst = call.Start
				}
				if call.End.After(otherLast) {
					otherLast = call.End
				}
			}
			continue
		}
		if call.Degraded != "" {
			if call.End.After(lastDegraded[call.Replica]) {
				lastDegraded[call.Replica] = call.End
			}
		} else if call.Start.After(okAt.Add(failoverResume)) {
			okAfter[call.Replica]++
		}
	}
	for i := range tools {
		resumedIn := lastDegraded[i].Sub(okAt)
		t.Logf("replica %d: the last fallback on the killed master's slots %v after the cluster was ok; %d calls served by Redis after %v",
			i, resumedIn.Round(time.Millisecond), okAfter[i], failoverResume)
		if resumedIn > failoverResume {
			t.Errorf("replica %d still fell back on the killed master's slots %v after the cluster was ok, want within %v",
				i, resumedIn, failoverResume)
		}
		if okAfter[i] == 0 {
			t.Errorf("replica %d: no call on the killed master's slots served by Redis after %v", i, failoverResume)
		}
	}
	t.Logf("%d calls, the slowest %v; %d store errors (the last: %v)", len(calls), slowest, errs.n.Load(), errs.last.Load())
	if otherDegraded > 0 {
		// With cluster-require-full-coverage yes (the default), every node
		// refuses every key (CLUSTERDOWN) from when the killed master is
		// marked failed until its replica is promoted.
		t.Logf("calls on the other masters' runs: %d fell back, from %v to %v after the kill",
			otherDegraded, otherFirst.Sub(killed).Round(time.Millisecond), otherLast.Sub(killed).Round(time.Millisecond))
	}
	if slowest > nodeStoreTimeout+loadSlack {
		t.Errorf("a call took %v, want the store timeout %v (+ %v for a loaded machine)", slowest, nodeStoreTimeout, loadSlack)
	}

	// Approvals: written again soon after the cluster was ok, and none
	// acknowledged before the kill (but for the replication lag) lost.
	if last := time.Unix(0, aprLastErr.Load()); last.Sub(okAt) > failoverResume {
		t.Errorf("an approval write failed %v after the cluster was ok, want none after %v: %v", last.Sub(okAt), failoverResume, aprErr.Load())
	}
	a := stores[1].Approvals()
	var lost, lostInLag, before, after int
	for _, s := range acked {
		ctx, cancel := context.WithTimeout(context.Background(), calm)
		row, err := a.Load(ctx, s.id)
		cancel()
		switch {
		case s.at.Before(killed):
			before++
		case s.at.After(okAt):
			after++
		}
		if err == nil && string(row) == string(s.row) {
			continue
		}
		if s.at.After(killed.Add(-approvalLag)) && s.at.Before(killed) {
			lostInLag++
			continue
		}
		lost++
		if lost <= 3 {
			t.Errorf("approval %s, acknowledged %v after the kill, is lost: %q, %v", s.id, s.at.Sub(killed), row, err)
		}
	}
	t.Logf("approvals: %d acknowledged before the kill, %d after the cluster was ok; %d lost, %d acknowledged within %v of the kill lost",
		before, after, lost, lostInLag, approvalLag)
	if before == 0 || after == 0 {
		t.Errorf("%d approvals written before the kill, %d after the failover: want some of each", before, after)
	}
	if lost > 0 {
		t.Errorf("%d approvals lost", lost)
	}
}

// limitsFleet is, per replica, a tool declared Once and a tool costing 0.4,
// on the replica's Store, with the runs on one master they are called in.
type limitsFleet struct {
	once, pay       []toolmw.Tool
	onceIDs, payIDs []string

	mu       sync.Mutex
	onceRuns map[string]int // executions per run
	payRuns  map[string]int
	stop     chan struct{}
	wg       sync.WaitGroup
}

func newLimitsFleet(t *testing.T, stores []*redisstate.Store, m *slotMap, master *redisProc) *limitsFleet {
	t.Helper()
	l := &limitsFleet{onceRuns: map[string]int{}, payRuns: map[string]int{},
		onceIDs: namesOn(m, master, "calls:", "once", 4), payIDs: namesOn(m, master, "spend:", "pay", 4)}
	count := func(runs map[string]int) toolmw.Tool {
		return func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			run, _ := budget.RunFrom(ctx)
			l.mu.Lock()
			runs[run.ID()]++
			l.mu.Unlock()
			return toolmw.Text("done"), nil
		}
	}
	for _, st := range stores {
		l.once = append(l.once, mustWrap(t, "cancel_booking", count(l.onceRuns), runlimit.New(runlimit.Once("cancel_booking"),
			runlimit.WithStore(st.RunCalls(), store.WithTimeout(nodeStoreTimeout)))))
		l.pay = append(l.pay, mustWrap(t, "pay", count(l.payRuns), spend.New(spend.Fixed("pay", 0.4),
			spend.WithStore(st.Spend(), store.WithTimeout(nodeStoreTimeout)))))
	}
	// Each run's first call, through Redis, before the kill.
	for _, id := range l.onceIDs {
		warm(t, func(int) error { _, err := l.once[0](inRun(id), nil); return err })
	}
	for _, id := range l.payIDs {
		warm(t, func(int) error { _, err := l.pay[0](spendRun(id, 1), nil); return err })
	}
	return l
}

// drive calls every run on every replica, each call with its own Run and
// Account, until the returned function is called.
func (l *limitsFleet) drive() (stop func()) {
	l.stop = make(chan struct{})
	for i := range l.once {
		l.wg.Go(func() {
			for {
				select {
				case <-l.stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				for _, id := range l.onceIDs {
					_, _ = l.once[i](inRun(id), nil)
				}
				for _, id := range l.payIDs {
					_, _ = l.pay[i](spendRun(id, 1), nil)
				}
			}
		})
	}
	return func() { close(l.stop); l.wg.Wait() }
}

// check: during the failover each replica ran each run's Once tool at most
// once and spent at most the limit on each run; once the calls decided
// without Redis are written back, no replica runs a Once run again, and a
// run spends only what Redis still has room for.
func (l *limitsFleet) check(t *testing.T) {
	t.Helper()
	time.Sleep(time.Second) // the write-backs: a rest or two after Redis answers
	l.mu.Lock()
	onceBefore, payBefore := maps.Clone(l.onceRuns), maps.Clone(l.payRuns)
	l.mu.Unlock()
	for range 3 {
		for i := range l.once {
			for _, id := range l.onceIDs {
				_, _ = l.once[i](inRun(id), nil)
			}
			for _, id := range l.payIDs {
				_, _ = l.pay[i](spendRun(id, 1), nil)
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	replicas := len(l.once)
	for _, id := range l.onceIDs {
		t.Logf("Once run %s: %d executions through the failover, %d after", id, onceBefore[id], l.onceRuns[id]-onceBefore[id])
		if n := onceBefore[id]; n < 1 || n > 1+replicas {
			t.Errorf("Once run %s ran %d times through the failover, want 1 and at most one more per replica (%d)", id, n, replicas)
		}
		if n := l.onceRuns[id] - onceBefore[id]; n != 0 {
			t.Errorf("Once run %s ran %d more times after the failover, want none", id, n)
		}
	}
	for _, id := range l.payIDs {
		t.Logf("run %s: %d calls of 0.4 through the failover, %d after", id, payBefore[id], l.payRuns[id]-payBefore[id])
		// 0.4 each under a limit of 1: two per replica at most, and two
		// in all once Redis holds what ran.
		if n := payBefore[id]; n > 2*replicas {
			t.Errorf("run %s spent %d × 0.4 through the failover, want at most the limit per replica (%d calls)", id, n, 2*replicas)
		}
		if after := l.payRuns[id] - payBefore[id]; after > 0 && payBefore[id]+after > 2 {
			t.Errorf("run %s: %d calls of 0.4 after the failover, with %d before, under a limit of 1", id, after, payBefore[id])
		}
	}
}

// lateLimits is a fail-closed Once tool on replica 0 and a fail-closed
// tool costing 0.4 on replica 1, with the fault tests' 50 ms store
// timeout, each called in a run of its own that one master serves.
type lateLimits struct {
	once, pay         toolmw.Tool
	onceID, payID     string
	onceRuns, payRuns *counted
	onceBase, payBase int // executions of the warm-up
}

func newLateLimits(t *testing.T, stores []*redisstate.Store, m *slotMap, master *redisProc) *lateLimits {
	t.Helper()
	l := &lateLimits{onceRuns: &counted{}, payRuns: &counted{},
		onceID: namesOn(m, master, "calls:", "late", 1)[0], payID: namesOn(m, master, "spend:", "latepay", 1)[0]}
	l.once = mustWrap(t, "cancel_booking", l.onceRuns.tool, runlimit.New(runlimit.Once("cancel_booking"),
		runlimit.WithStore(stores[0].RunCalls(), store.WithTimeout(storeTimeout)), runlimit.WithFailClosed()))
	l.pay = mustWrap(t, "pay", l.payRuns.tool, spend.New(spend.Fixed("pay", 0.4),
		spend.WithStore(stores[1].Spend(), store.WithTimeout(storeTimeout)), spend.WithFailClosed()))
	// Load the scripts on the master, on warm connections, in runs of
	// their own.
	for i := range 2 {
		warm(t, func(try int) error {
			_, err := l.once(inRun(fmt.Sprintf("%s-warm-%d-%d", l.onceID, i, try)), nil)
			return err
		})
		warm(t, func(try int) error {
			_, err := l.pay(spendRun(fmt.Sprintf("%s-warm-%d-%d", l.payID, i, try), 1), nil)
			return err
		})
	}
	return l
}

// stalled calls each tool in its run while the master is stalled: refused
// (fail closed) after the store timeout, their scripts sent and left to
// run when the master continues.
func (l *lateLimits) stalled(t *testing.T) {
	t.Helper()
	l.onceBase, l.payBase = l.onceRuns.runs(), l.payRuns.runs()
	if _, err := l.once(inRun(l.onceID), nil); !callLimited(err) {
		t.Errorf("a fail-closed Once call on the stalled master: %v, want refused", err)
	}
	if _, err := l.pay(spendRun(l.payID, 1), nil); !spendLimited(err) {
		t.Errorf("a fail-closed costed call on the stalled master: %v, want refused", err)
	}
}

// resumed: once the master continued and the layers settled the calls it
// answered too late, the run's count and hold are 0, its Once tool runs
// once and it spends its limit: no slot lost, no phantom hold.
func (l *lateLimits) resumed(t *testing.T, c *redis.ClusterClient) {
	t.Helper()
	ctx := context.Background()
	var count, held string
	for deadline := time.Now().Add(recoverWithin); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		count = c.HGet(ctx, storeKey("toolmw:", "calls:", l.onceID), hashed("cancel_booking")).Val()
		held = c.HGet(ctx, storeKey("toolmw:", "spend:", l.payID), "held").Val()
		if (count == "" || count == "0") && (held == "" || held == "0") {
			break
		}
	}
	if count != "" && count != "0" || held != "" && held != "0" {
		t.Errorf("after the stall a run's count is %q and another's hold %q, with nothing run: want 0 and 0", count, held)
	}
	for range 3 {
		_ = settled(l.once, func() context.Context { return inRun(l.onceID) })
		_ = settled(l.pay, func() context.Context { return spendRun(l.payID, 1) })
	}
	if n := l.onceRuns.runs() - l.onceBase; n != 1 {
		t.Errorf("the fail-closed Once tool ran %d times after the stall, want 1", n)
	}
	if n := l.payRuns.runs() - l.payBase; n != 2 {
		t.Errorf("%d fail-closed calls of 0.4 ran under a limit of 1 after the stall, want 2", n)
	}
}
