package redisstate_test

// The harness of the cluster and Sentinel tests: real redis-server
// processes, each started on free ports of 127.0.0.1 and killed when the
// test ends. A cluster is six nodes (three masters, each with one replica)
// made by redis-cli --cluster create; a Sentinel deployment is a master,
// its replica and three sentinels (redis-server --sentinel). Like
// startRedis, they skip the test when redis-server (or redis-cli) is not on
// PATH, unless TOOLMW_REQUIRE_REDIS=1.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisProc is one redis-server process of a test: a cluster node, a
// Sentinel-managed master or replica, or a sentinel.
type redisProc struct {
	t    testing.TB
	Port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// needBinaries returns the paths of the binaries, or skips the test (fails
// it with TOOLMW_REQUIRE_REDIS=1) when one is not on PATH.
func needBinaries(t testing.TB, names ...string) []string {
	t.Helper()
	var paths []string
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			if os.Getenv(requireRedis) == "1" {
				t.Fatalf("%s is not on PATH and %s=1: install it (apt-get install -y redis-server)", n, requireRedis)
			}
			t.Skipf("%s is not on PATH: install it (apt-get install -y redis-server) to run this test; %s=1 makes this a failure", n, requireRedis)
		}
		paths = append(paths, p)
	}
	return paths
}

// startProc starts redis-server with args (a config file first, if any,
// then options) in a new temporary directory, on a free port, waits until
// it answers PING and kills it when the test ends. conf, when not empty,
// is written to redis.conf in that directory and given first (Sentinel
// needs a file it can rewrite).
func startProc(t testing.TB, bin, conf string, args ...string) *redisProc {
	t.Helper()
	p := &redisProc{t: t, Port: freePort(t), dir: t.TempDir()}
	var argv []string
	if conf != "" {
		file := filepath.Join(p.dir, "redis.conf")
		if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		argv = append(argv, file)
	}
	argv = append(argv, "--port", strconv.Itoa(p.Port), "--bind", "127.0.0.1", "--dir", p.dir,
		"--loglevel", "warning", "--logfile", filepath.Join(p.dir, "redis.log"))
	argv = append(argv, args...)
	p.cmd = exec.Command(bin, argv...)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(p.cmd, p.done)
	t.Cleanup(p.Kill)
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("redis-server exited at start: %v\n%s", err, p.Log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not answer within 10s: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Addr returns the process's address.
func (p *redisProc) Addr() string { return "127.0.0.1:" + strconv.Itoa(p.Port) }

// Log returns the process's log.
func (p *redisProc) Log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "redis.log"))
	return string(b)
}

// Kill kills the process at once (SIGKILL), continuing it first if it is
// stalled; its state is lost. Killing a dead process does nothing.
func (p *redisProc) Kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	<-p.done
	p.cmd = nil
}

// Alive reports whether the process has not been killed.
func (p *redisProc) Alive() bool { return p.cmd != nil }

// Stall stops the process (SIGSTOP), so it keeps its connections and
// answers nothing, until resume continues it (SIGCONT). Unlike DEBUG SLEEP,
// a stall lasts as long as the test needs.
func (p *redisProc) Stall() (resume func()) {
	p.t.Helper()
	proc := p.cmd.Process
	stopProcess(p.t, proc)
	var once sync.Once
	resume = func() { once.Do(func() { _ = proc.Signal(syscall.SIGCONT) }) }
	p.t.Cleanup(resume)
	return resume
}

// info returns the fields of INFO section of the process, or nil when it
// does not answer within a second.
func (p *redisProc) info(section string) map[string]string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1})
	defer c.Close()
	s, err := c.Info(ctx, section).Result()
	if err != nil {
		return nil
	}
	m := map[string]string{}
	for _, line := range strings.Split(s, "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// redisCluster is a Redis Cluster of one test: six nodes, three masters
// each with one replica, without persistence.
type redisCluster struct {
	t       testing.TB
	Nodes   []*redisProc
	Initial *slotMap // the map once started, with every master's replica
}

// The cluster-node-timeout of the test clusters. failoverNodeTimeout is the
// issue's (#35): a master that does not answer for 2 s is failed over.
// stableNodeTimeout is for the tests that stall a node and must not see it
// failed over: longer than any stall they make.
const (
	failoverNodeTimeout = 2 * time.Second
	stableNodeTimeout   = 60 * time.Second
)

// startCluster starts six cluster nodes with nodeTimeout as their
// cluster-node-timeout, makes them a cluster with redis-cli --cluster
// create (three masters, one replica each) and waits until every node says
// cluster_state:ok, sees every slot served and every replica is in sync
// with its master. It takes about 2.5 s, most of it redis-cli's.
func startCluster(t testing.TB, nodeTimeout time.Duration) *redisCluster {
	t.Helper()
	bins := needBinaries(t, "redis-server", "redis-cli")
	c := &redisCluster{t: t, Nodes: make([]*redisProc, 6)}
	for i := range c.Nodes {
		// Each node's cluster bus gets a free port of its own: the default,
		// port + 10000, may be taken or above 65535.
		c.Nodes[i] = startProc(t, bins[0], "",
			"--save", "", "--appendonly", "no", "--enable-debug-command", "yes", "--repl-diskless-sync-delay", "0",
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-port", strconv.Itoa(freePort(t)),
			"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10))
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr())
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bins[1], args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.Initial = c.WaitOK(20 * time.Second)
	c.waitStreaming(c.Initial, 20*time.Second)
	return c
}

// waitStreaming waits until every master of m streams its writes to its
// replica: a master that has just sent a replica its data (a diskless
// full sync) keeps the writes that follow until the replica's first
// acknowledgement, up to a second later, and a master killed meanwhile
// loses them. It writes a key on each master and waits until the
// replica's offset reaches the master's.
func (c *redisCluster) waitStreaming(m *slotMap, within time.Duration) {
	c.t.Helper()
	for master, replica := range m.replica {
		var key string
		for i := 0; key == ""; i++ {
			if k := "harness-probe-" + strconv.Itoa(i); servedBy(m, k) == master {
				key = k
			}
		}
		mc := redis.NewClient(&redis.Options{Addr: master, MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), within)
		err := mc.Set(ctx, key, "1", time.Minute).Err()
		cancel()
		mc.Close()
		if err != nil {
			c.t.Fatalf("write a probe on %s: %v", master, err)
		}
		mn, rn := c.byAddr(master), c.byAddr(replica)
		want, _ := strconv.ParseInt(mn.info("replication")["master_repl_offset"], 10, 64)
		waitFor(c.t, within, "the replica of "+master+" streaming", func() string {
			got, _ := strconv.ParseInt(rn.info("replication")["slave_repl_offset"], 10, 64)
			if got < want || want == 0 {
				return fmt.Sprintf("replica offset %d, master's %d", got, want)
			}
			return ""
		})
	}
}

// Addrs returns the addresses of the nodes.
func (c *redisCluster) Addrs() []string {
	var a []string
	for _, n := range c.Nodes {
		a = append(a, n.Addr())
	}
	return a
}

// fleetClusterOptions are the client settings the README's "Deploying"
// section gives a fleet's ClusterClient.
func fleetClusterOptions(addrs []string) *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs:                  addrs,
		ContextTimeoutEnabled:  true, // calls end at their deadlines
		DisableRoutingPolicies: true, // no COMMAND table fetched under a lock, with a 5 s timeout of its own
	}
}

// Client returns a new ClusterClient of the cluster with the fleet's
// settings, closed when the test ends.
func (c *redisCluster) Client() *redis.ClusterClient {
	cc := redis.NewClusterClient(fleetClusterOptions(c.Addrs()))
	c.t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// byAddr returns the node of an address, or nil.
func (c *redisCluster) byAddr(addr string) *redisProc {
	for _, n := range c.Nodes {
		if n.Addr() == addr {
			return n
		}
	}
	return nil
}

// slotMap is who serves each slot, as one node sees it.
type slotMap struct {
	master  [16384]string     // "" when no node serves the slot
	replica map[string]string // a master's address → its replica's, when asked for
}

// slots returns the slot map node n gives (CLUSTER SLOTS), or an error.
func (c *redisCluster) slots(n *redisProc) (*slotMap, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cl := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1})
	defer cl.Close()
	//lint:ignore SA1019 CLUSTER SLOTS is what go-redis's ClusterClient reads its map from (loadState)
	ranges, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	m := &slotMap{}
	for _, r := range ranges {
		if len(r.Nodes) == 0 {
			continue
		}
		for s := r.Start; s <= r.End; s++ {
			m.master[s] = r.Nodes[0].Addr
		}
	}
	return m, nil
}

// ok reports whether the live nodes agree that the cluster is ok: each
// says cluster_state:ok and serves every slot from a live master with a
// live replica in sync, as the first live node's map has it. It returns
// that map, or why not.
func (c *redisCluster) ok(needReplicas bool) (*slotMap, string) {
	var first *slotMap
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		cl := redis.NewClient(&redis.Options{Addr: n.Addr(), MaxRetries: -1})
		info, err := cl.ClusterInfo(ctx).Result()
		cl.Close()
		cancel()
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", n.Addr(), err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return nil, n.Addr() + ": cluster_state is not ok"
		}
		m, err := c.slots(n)
		if err != nil {
			return nil, fmt.Sprintf("%s: %v", n.Addr(), err)
		}
		if first == nil {
			first = m
		} else if first.master != m.master {
			return nil, n.Addr() + " disagrees on the slot map"
		}
	}
	if first == nil {
		return nil, "no live node"
	}
	for s, addr := range first.master {
		if n := c.byAddr(addr); n == nil || !n.Alive() {
			return nil, fmt.Sprintf("slot %d is served by %q, not a live node", s, addr)
		}
	}
	if needReplicas {
		first.replica = map[string]string{}
		for _, n := range c.Nodes {
			if !n.Alive() || slices.Contains(first.master[:], n.Addr()) {
				continue
			}
			r := n.info("replication")
			if r["role"] != "slave" || r["master_link_status"] != "up" {
				return nil, "the replica " + n.Addr() + " is not in sync"
			}
			first.replica["127.0.0.1:"+r["master_port"]] = n.Addr()
		}
		if len(first.replica) != 3 {
			return nil, fmt.Sprintf("%d masters have replicas, want 3", len(first.replica))
		}
	}
	return first, ""
}

// WaitOK waits until the cluster is ok with every master replicated (see
// ok), for at most within, and fails the test otherwise.
func (c *redisCluster) WaitOK(within time.Duration) *slotMap {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		m, why := c.ok(true)
		if why == "" {
			return m
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("the cluster is not ok after %v: %s", within, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// servedBy returns the address of the master serving key in m.
func servedBy(m *slotMap, key string) string { return m.master[keySlot(key)] }

// keySlot returns the cluster slot of key: CRC16 (XMODEM) of its hash tag,
// or of the whole key when it has none, modulo 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// storeKey returns the Redis key a Store with prefix keeps name of kind
// under ("calls:", "apr:", "rl:" …): the prefix, the kind and 32 hex
// digits of name's SHA-256 (see doc.go, Keys).
func storeKey(prefix, kind, name string) string {
	sum := sha256.Sum256([]byte(name))
	return prefix + kind + hex.EncodeToString(sum[:16])
}

// namesOn returns n names, name-0, name-1 …, whose keys of kind (with the
// default prefix) master serves, per the map m.
func namesOn(m *slotMap, master *redisProc, kind, name string, n int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		id := name + "-" + strconv.Itoa(i)
		if servedBy(m, storeKey("toolmw:", kind, id)) == master.Addr() {
			out = append(out, id)
		}
	}
	return out
}
