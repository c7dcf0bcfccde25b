package redisstate_test

// The test harness: a real redis-server started per test on a free port of
// 127.0.0.1, and replicas, each with its own go-redis client and Store,
// that build their own toolmw stacks. Files testing other parts of this
// module (the shared breaker) reuse it.

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
)

// requireRedis is the environment variable that makes a missing
// redis-server a failure instead of a skip (.ci/run sets it).
const requireRedis = "TOOLMW_REQUIRE_REDIS"

// redisServer is a redis-server process of one test.
type redisServer struct {
	t    testing.TB
	bin  string
	port int
	dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// startRedis starts a redis-server on a free port of 127.0.0.1, without
// persistence, with DEBUG enabled, and stops it when the test ends. It
// skips the test when redis-server is not on PATH, unless
// TOOLMW_REQUIRE_REDIS=1, when it fails it.
func startRedis(t testing.TB) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(requireRedis) == "1" {
			t.Fatalf("redis-server is not on PATH and %s=1: install it (apt-get install -y redis-server)", requireRedis)
		}
		t.Skipf("redis-server is not on PATH: install it (apt-get install -y redis-server) to run this test; %s=1 makes this a failure", requireRedis)
	}
	s := &redisServer{t: t, bin: bin, port: freePort(t), dir: t.TempDir()}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// freePort returns a TCP port of 127.0.0.1 free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Addr returns the server's address.
func (s *redisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// start starts the process and waits until it answers PING.
func (s *redisServer) start() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir,
		"--enable-debug-command", "yes", "--loglevel", "warning",
		"--logfile", filepath.Join(s.dir, "redis.log"))
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.t.Fatalf("redis-server exited at start: %v\n%s", err, log)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server did not answer within 10s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill kills the server at once (SIGKILL): its state is lost.
func (s *redisServer) Kill() {
	s.t.Helper()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts the server again on the same port, empty.
func (s *redisServer) Restart() {
	s.t.Helper()
	s.Kill()
	s.start()
}

// Stop stops the server; the test's cleanup calls it.
func (s *redisServer) Stop() { s.Kill() }

// Client returns a new client of the server, closed when the test ends.
func (s *redisServer) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), ContextTimeoutEnabled: true})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Stall stops the whole server (SIGSTOP): it keeps its connections and its
// data and answers nothing, as a client sees a server that is busy, paused
// or swapped out, until resume continues it (SIGCONT) and returns once it
// answers a ping again. Unlike a DEBUG SLEEP of a fixed length, a stall
// lasts as long as the test needs, so a slow machine cannot outlast it:
// give the calls made meanwhile a deadline of their own (stalledCallTimeout),
// so a call that waits for the server fails instead of hanging.
func (s *redisServer) Stall() (resume func() error) {
	s.t.Helper()
	proc := s.cmd.Process
	stopProcess(s.t, proc)
	probe := s.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	err := probe.Ping(ctx).Err()
	cancel()
	if err == nil {
		s.t.Fatal("redis-server answered a ping after SIGSTOP")
	}
	return func() error {
		if err := proc.Signal(syscall.SIGCONT); err != nil {
			return err
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err := probe.Ping(ctx).Err()
			cancel()
			if err == nil || time.Now().After(deadline) {
				return err
			}
		}
	}
}

// stopProcess stops proc (SIGSTOP) and waits until the kernel says it is
// stopped (the signal is delivered asynchronously), at most 5 s; without
// procfs it does not wait.
func stopProcess(t testing.TB, proc *os.Process) {
	t.Helper()
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("stall redis-server: %v", err)
	}
	stat := filepath.Join("/proc", strconv.Itoa(proc.Pid), "stat")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return // no procfs
		}
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return
		}
	}
}

// loadSlack is what a bound on wall time measured against a real
// redis-server adds for a loaded machine: on a busy 2-core machine (two CPU
// hogs, -race, load 10 and more) a goroutine may wait a few hundred
// milliseconds to run. Every bound that uses it stays well below what the
// behaviour it rules out would take (a call that waits for a stalled server
// ends at stalledCallTimeout at the earliest).
const loadSlack = time.Second

// stalledCallTimeout is the deadline of a call made while the server is
// stalled: one that waited for the server ends then, failed, instead of
// hanging until the stall ends.
const stalledCallTimeout = 5 * time.Second

// faultCallDeadline is the deadline of each call the fault tests make in a
// loop while Redis is killed or stalled: the store timeout plus twice the
// slack of a loaded machine, so a call that fell back in time meets it on
// a busy machine, and shorter than a stall (faultStall), so a call that
// waited for Redis fails.
const (
	faultCallDeadline = storeTimeout + 2*loadSlack
	faultStall        = faultCallDeadline + loadSlack
)

// recoverWithin is how long after Redis came back the replicas may still
// fall back: go-redis redials a pool whose dials failed about once a
// second, and a loaded machine adds to that.
const recoverWithin = 10 * time.Second

// roundTrips counts the commands a client sends, pipelines counted once.
type roundTrips struct{ n atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmd)
	}
}

func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		return next(ctx, cmds)
	}
}

// replica is one replica of a fleet: its own client, round-trip counter
// and Store. Tests build its toolmw stack from Store.
type replica struct {
	Client     *redis.Client
	Store      *redisstate.Store
	RoundTrips *roundTrips
}

// newReplica returns a replica on the server's address, whose client is
// closed when the test ends.
func newReplica(t testing.TB, s *redisServer, opts ...redisstate.Option) *replica {
	t.Helper()
	c := s.Client()
	rt := &roundTrips{}
	c.AddHook(rt)
	// An operation whose context has no deadline gets calm, not the 50 ms
	// default, which a round trip on a loaded machine can exceed; the
	// layers' ports give their own, shorter deadlines, and the tests of
	// those give theirs. opts come after, so a test can set its own.
	st, err := redisstate.New(c, append([]redisstate.Option{redisstate.WithTimeout(calm)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &replica{Client: c, Store: st, RoundTrips: rt}
}

// newReplicas returns n replicas of the server.
func newReplicas(t testing.TB, s *redisServer, n int, opts ...redisstate.Option) []*replica {
	t.Helper()
	rs := make([]*replica, n)
	for i := range rs {
		rs[i] = newReplica(t, s, opts...)
	}
	return rs
}

// noLeaks fails the test when, after its cleanups, more goroutines run than
// before it: call it first. It waits a bounded time for goroutines that are
// ending.
func noLeaks(t *testing.T) {
	before := countGoroutines()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			n := countGoroutines()
			if n <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d goroutines after the test, %d before", n, before)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func countGoroutines() int { return runtime.NumGoroutine() }

// warm calls f, which warms a replica's connection, until it succeeds,
// at most 20 times: on a loaded machine a store timeout may pass before
// the first answer. It fails the test when no try succeeds.
func warm(t *testing.T, f func(try int) error) {
	t.Helper()
	var err error
	for try := range 20 {
		if err = f(try); err == nil {
			return
		}
	}
	t.Fatalf("the replica never answered: %v", err)
}
