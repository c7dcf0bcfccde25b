package redisstate_test

// The Store on a Sentinel-managed master (a master, its replica and three
// sentinels, started by the test): New accepts the client
// NewUniversalClient makes for a MasterName, and a failover of the master
// is followed.

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolmw/toolmw"
	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/budget"
)

// sentinelMaster is the name the sentinels of the tests monitor.
const sentinelMaster = "mymaster"

// sentinelDownAfter is how long the test's sentinels wait for a master
// that does not answer before they call it down (and, two agreeing, fail
// it over).
const sentinelDownAfter = time.Second

// sentinelDeployment is a master, its replica and three sentinels.
type sentinelDeployment struct {
	t               testing.TB
	Master, Replica *redisProc
	Sentinels       []*redisProc
}

// startSentinel starts a master and its replica (no persistence) and three
// sentinels monitoring them (quorum 2), and waits until the replica is in
// sync and every sentinel knows the replica and the other two sentinels.
// It takes about 2 s, most of it the sentinels' discovery of one another
// (their hello messages go every 2 s).
func startSentinel(t testing.TB) *sentinelDeployment {
	t.Helper()
	bin := needBinaries(t, "redis-server")[0]
	d := &sentinelDeployment{t: t}
	d.Master = startProc(t, bin, "", "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0")
	d.Replica = startProc(t, bin, "", "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0",
		"--replicaof", "127.0.0.1", strconv.Itoa(d.Master.Port))
	waitFor(t, 10*time.Second, "the replica in sync", func() string {
		if r := d.Replica.info("replication"); r["master_link_status"] != "up" {
			return "master_link_status " + r["master_link_status"]
		}
		return ""
	})
	conf := fmt.Sprintf("sentinel monitor %[1]s 127.0.0.1 %[2]d 2\n"+
		"sentinel down-after-milliseconds %[1]s %[3]d\n"+
		"sentinel failover-timeout %[1]s 5000\n"+
		"sentinel parallel-syncs %[1]s 1\n", sentinelMaster, d.Master.Port, sentinelDownAfter.Milliseconds())
	for range 3 {
		d.Sentinels = append(d.Sentinels, startProc(t, bin, conf, "--sentinel"))
	}
	waitFor(t, 20*time.Second, "the sentinels know the replica and one another", func() string {
		for _, s := range d.Sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			others, err1 := c.Sentinels(ctx, sentinelMaster).Result()
			replicas, err2 := c.Replicas(ctx, sentinelMaster).Result()
			cancel()
			c.Close()
			switch {
			case err1 != nil || err2 != nil:
				return fmt.Sprint(err1, err2)
			case len(others) != 2 || len(replicas) != 1:
				return fmt.Sprintf("%s knows %d sentinels and %d replicas", s.Addr(), len(others), len(replicas))
			case replicas[0]["flags"] != "slave":
				return "the replica's flags: " + replicas[0]["flags"]
			}
		}
		return ""
	})
	return d
}

// SentinelAddrs returns the sentinels' addresses.
func (d *sentinelDeployment) SentinelAddrs() []string {
	var a []string
	for _, s := range d.Sentinels {
		a = append(a, s.Addr())
	}
	return a
}

// MasterAddr returns the master's address as every sentinel gives it, or
// "" when they disagree or one does not answer.
func (d *sentinelDeployment) MasterAddr() string {
	var addr string
	for i, s := range d.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		a, err := c.GetMasterAddrByName(ctx, sentinelMaster).Result()
		cancel()
		c.Close()
		if err != nil || len(a) != 2 {
			return ""
		}
		if i == 0 {
			addr = a[0] + ":" + a[1]
		} else if addr != a[0]+":"+a[1] {
			return ""
		}
	}
	return addr
}

// waitFor waits until check returns "", for at most within, and fails the
// test with check's last answer otherwise.
func waitFor(t testing.TB, within time.Duration, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		why := check()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v: %s", what, within, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sentinelResume is how long after the sentinels name the new master the
// fleet may still fall back: go-redis's pool, after as many failed dials
// as its size, dials again only about once a second.
const sentinelResume = 2 * time.Second

// TestSentinelFailover: the master killed (SIGKILL) while three replicas,
// each with its own client made by NewUniversalClient with the master's
// name (a Sentinel failover client), call runs: the sentinels promote the
// replica; within sentinelResume of their naming it, no replica falls back
// any more; no call outlasts the store timeout (plus a loaded machine's
// slack).
func TestSentinelFailover(t *testing.T) {
	noLeaks(t)
	d := startSentinel(t)
	ids := []string{"run-a", "run-b", "run-c"}
	errs := &storeErrors{}
	var tools []toolmw.Tool
	for range 3 {
		c := redis.NewUniversalClient(&redis.UniversalOptions{MasterName: sentinelMaster, Addrs: d.SentinelAddrs(),
			ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		st, err := redisstate.New(c)
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, runLimited(t, st, nodeStoreTimeout, errs.report))
	}
	for _, tool := range tools {
		for _, id := range ids {
			ctx := budget.ContextWithRun(context.Background(), budget.NewRun(budget.WithID(id)))
			warm(t, func(int) error { _, err := tool(ctx, nil); return err })
		}
	}

	dr := driveRuns(t, tools, ids, nodeCallDeadline, 5*time.Millisecond)
	time.Sleep(300 * time.Millisecond)
	killed := time.Now()
	d.Master.Kill()
	// A failover takes the down-after period and an election, a few
	// seconds; on a machine loaded to starvation an election may fail, and
	// a sentinel tries again after twice the failover timeout (10 s).
	waitFor(t, 60*time.Second, "the sentinels fail the master over", func() string {
		if a := d.MasterAddr(); a != d.Replica.Addr() {
			return "the sentinels name " + a
		}
		if r := d.Replica.info("replication"); r["role"] != "master" {
			return "the replica's role: " + r["role"]
		}
		return ""
	})
	okAt := time.Now()
	time.Sleep(sentinelResume + time.Second)
	calls := dr.Stop()

	t.Logf("the sentinels named the new master %v after the kill", okAt.Sub(killed))
	var slowest time.Duration
	lastDegraded := make([]time.Time, len(tools))
	okAfter := make([]int, len(tools))
	degraded := 0
	for _, call := range calls {
		if call.Err != nil {
			t.Errorf("replica %d, run %s: a call failed: %v", call.Replica, call.ID, call.Err)
		}
		slowest = max(slowest, call.End.Sub(call.Start))
		if call.Degraded != "" {
			degraded++
			if call.End.After(lastDegraded[call.Replica]) {
				lastDegraded[call.Replica] = call.End
			}
		} else if call.Start.After(okAt.Add(sentinelResume)) {
			okAfter[call.Replica]++
		}
	}
	for i := range tools {
		resumedIn := lastDegraded[i].Sub(okAt)
		t.Logf("replica %d: the last fallback %v after the sentinels named the new master; %d calls served by Redis after %v",
			i, resumedIn.Round(time.Millisecond), okAfter[i], sentinelResume)
		if resumedIn > sentinelResume {
			t.Errorf("replica %d still fell back %v after the sentinels named the new master, want within %v", i, resumedIn, sentinelResume)
		}
		if okAfter[i] == 0 {
			t.Errorf("replica %d: no call served by Redis after %v", i, sentinelResume)
		}
	}
	t.Logf("%d calls, %d degraded, the slowest %v; %d store errors (the last: %v)", len(calls), degraded, slowest, errs.n.Load(), errs.last.Load())
	if degraded == 0 {
		t.Error("no call fell back while the master was down")
	}
	if slowest > nodeStoreTimeout+loadSlack {
		t.Errorf("a call took %v, want the store timeout %v (+ %v for a loaded machine)", slowest, nodeStoreTimeout, loadSlack)
	}
	if errs.partial.Load() != 0 {
		t.Errorf("%d partial outages reported by a Store on one master, want none", errs.partial.Load())
	}
}
