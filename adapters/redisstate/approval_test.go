package redisstate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	redisstate "github.com/toolmw/toolmw/adapters/redisstate"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/approval/approvaltest"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/taxonomy"
)

// The approval store on a real redis-server, through the harness of
// server_test.go.

func TestApprovalsConformance(t *testing.T) {
	approvaltest.TestStore(t, func(t *testing.T) approval.Store {
		return newReplica(t, startRedis(t)).Store.Approvals()
	})
}

// Two replicas, each with its own client, see one another's rows and
// nonces; an id, a nonce and a key of the other ports never meet.
func TestApprovalsAcrossReplicas(t *testing.T) {
	srv := startRedis(t)
	a := newReplica(t, srv).Store.Approvals()
	b := newReplica(t, srv).Store.Approvals()
	ctx := context.Background()
	aprMust(t, a.Save(ctx, "apr_1", nil, []byte("v1")))
	if err := b.Save(ctx, "apr_1", nil, []byte("v1")); !errors.Is(err, approval.ErrConflict) {
		t.Fatalf("a second replica's insert: %v, want ErrConflict", err)
	}
	aprMust(t, b.Save(ctx, "apr_1", []byte("v1"), []byte("v2")))
	aprLoad(t, a, "apr_1", "v2")
	aprMust(t, a.Save(ctx, "apr_1", []byte("v2"), []byte{}))
	aprLoad(t, b, "apr_1", "")
	aprMust(t, b.Save(ctx, "apr_1", []byte{}, []byte("v3")))
	aprLoad(t, a, "apr_1", "v3")
	aprMust(t, a.Consume(ctx, "n1", "op_a"))
	if err := b.Consume(ctx, "n1", "op_b"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("the other replica's Consume: %v, want ErrConsumed", err)
	}
	// A Cancel through one replica frees the nonce for the other.
	aprMust(t, b.Cancel(ctx, "n1", "op_a"))
	aprMust(t, b.Consume(ctx, "n1", "op_b"))
	if err := a.Consume(ctx, "n1", "op_a"); !errors.Is(err, approval.ErrCanceled) {
		t.Fatalf("the cancelled operation's Consume: %v, want ErrCanceled", err)
	}
	// A nonce equal to an id is its own key.
	aprMust(t, b.Consume(ctx, "apr_1", "op_a"))
	aprLoad(t, a, "apr_1", "v3")
}

// Every key expires after ApprovalTTL, rewritten or not.
func TestApprovalsKeysExpire(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv, redisstate.WithPrefix("exp:"))
	a := r.Store.Approvals()
	ctx := context.Background()
	aprMust(t, a.Save(ctx, "apr_1", nil, []byte("v1")))
	aprMust(t, a.Consume(ctx, "n1", "op_1"))
	keys, err := r.Client.Keys(ctx, "exp:*").Result()
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys %q, %v; want 3 (the row, the nonce, the list of ids)", keys, err)
	}
	check := func() {
		t.Helper()
		for _, k := range keys {
			ttl, err := r.Client.PTTL(ctx, k).Result()
			if err != nil || ttl <= redisstate.ApprovalTTL-time.Minute || ttl > redisstate.ApprovalTTL {
				t.Fatalf("PTTL(%s) = %v, %v; want about %v", k, ttl, err, redisstate.ApprovalTTL)
			}
			if strings.Contains(k, "apr_1") || strings.Contains(k, "n1") {
				t.Fatalf("key %q holds the id", k)
			}
		}
	}
	check()
	// A swap renews the row's lifetime.
	for _, k := range keys {
		if strings.HasPrefix(k, "exp:apr:") {
			aprMust(t, r.Client.PExpire(ctx, k, time.Hour).Err())
		}
	}
	aprMust(t, a.Save(ctx, "apr_1", []byte("v1"), []byte("v2")))
	check()
	// A Cancel renews the nonce's record, and so does a Consume of a
	// nonce freed; a Cancel of a nonce never consumed makes a record
	// that expires too.
	for _, k := range keys {
		aprMust(t, r.Client.PExpire(ctx, k, time.Hour).Err())
	}
	aprMust(t, a.Cancel(ctx, "n1", "op_1"))
	aprMust(t, a.Save(ctx, "apr_1", []byte("v2"), []byte("v3")))
	check()
	aprMust(t, r.Client.PExpire(ctx, nonceKey("exp:", "n1"), time.Hour).Err())
	aprMust(t, a.Consume(ctx, "n1", "op_2"))
	check()
	aprMust(t, a.Cancel(ctx, "n2", "op_1"))
	if ttl, err := r.Client.PTTL(ctx, nonceKey("exp:", "n2")).Result(); err != nil || ttl <= redisstate.ApprovalTTL-time.Minute {
		t.Fatalf("PTTL of a nonce only cancelled = %v, %v; want about %v", ttl, err, redisstate.ApprovalTTL)
	}
}

func TestApprovalsBounds(t *testing.T) {
	a := newReplica(t, startRedis(t)).Store.Approvals()
	ctx := context.Background()
	long := strings.Repeat("k", redisstate.MaxApprovalKeyLen+1)
	tooBig := make([]byte, redisstate.MaxApprovalRowBytes+1)
	for name, err := range map[string]error{
		"Load id":       func() error { _, err := a.Load(ctx, long); return err }(),
		"Save id":       a.Save(ctx, long, nil, []byte("x")),
		"Save row":      a.Save(ctx, "id", nil, tooBig),
		"Consume nonce": a.Consume(ctx, long, "op"),
		"Consume op":    a.Consume(ctx, "n", long),
		"Cancel nonce":  a.Cancel(ctx, long, "op"),
		"Cancel op":     a.Cancel(ctx, "n", long),
	} {
		if !errors.Is(err, redisstate.ErrApprovalTooLarge) {
			t.Errorf("%s over the bound: %v, want ErrApprovalTooLarge", name, err)
		}
	}
	atBound := strings.Repeat("k", redisstate.MaxApprovalKeyLen)
	big := bytes.Repeat([]byte{0, 0xff}, redisstate.MaxApprovalRowBytes/2)
	aprMust(t, a.Save(ctx, atBound, nil, big))
	got, err := a.Load(ctx, atBound)
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("a row at the bound: %d bytes, %v", len(got), err)
	}
	if err := a.Save(ctx, atBound, tooBig, []byte("x")); !errors.Is(err, approval.ErrConflict) {
		t.Fatalf("a prev over the bound: %v, want ErrConflict", err)
	}
	aprMust(t, a.Consume(ctx, atBound, atBound))
	// Past MaxApprovalCancels cancelled operations of one nonce, Cancel
	// fails and changes nothing.
	for i := range redisstate.MaxApprovalCancels {
		aprMust(t, a.Cancel(ctx, atBound, fmt.Sprintf("%s%03d", atBound[:redisstate.MaxApprovalKeyLen-3], i)))
	}
	if err := a.Cancel(ctx, atBound, atBound); !errors.Is(err, redisstate.ErrApprovalTooLarge) {
		t.Fatalf("a Cancel past MaxApprovalCancels: %v, want ErrApprovalTooLarge", err)
	}
	aprMust(t, a.Consume(ctx, atBound, atBound)) // still held
	// A Cancel again has nothing to add: it succeeds at the bound.
	aprMust(t, a.Cancel(ctx, atBound, fmt.Sprintf("%s%03d", atBound[:redisstate.MaxApprovalKeyLen-3], 0)))
}

// A nonce consumed by an earlier version (SET NX of a string) stays
// consumed; an earlier version's SET NX finds a nonce this one recorded,
// freed or not, consumed.
func TestApprovalsNonceOfAnEarlierVersion(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv, redisstate.WithPrefix("old:"))
	a := r.Store.Approvals()
	ctx := context.Background()
	aprMust(t, r.Client.SetNX(ctx, nonceKey("old:", "n1"), "1", time.Hour).Err())
	if err := a.Consume(ctx, "n1", "op_1"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a nonce an earlier version consumed: %v, want ErrConsumed", err)
	}
	aprMust(t, a.Cancel(ctx, "n1", "op_1"))
	if err := a.Consume(ctx, "n1", "op_2"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("a nonce an earlier version consumed, after a Cancel: %v, want ErrConsumed", err)
	}
	aprMust(t, a.Consume(ctx, "n2", "op_1"))
	aprMust(t, a.Cancel(ctx, "n2", "op_1"))
	if ok, err := r.Client.SetNX(ctx, nonceKey("old:", "n2"), "1", time.Hour).Result(); err != nil || ok {
		t.Fatalf("an earlier version's SET NX of a freed nonce: %v, %v; want it refused", ok, err)
	}
}

var aprKey = []byte("0123456789abcdef0123456789abcdef")

func newAprReplica(s approval.Store, runs *atomic.Int64, opts ...store.Option) *approvaltest.Replica {
	return approvaltest.NewReplica(s, aprKey, runs, opts...)
}

// Two replicas race to execute one approved call: it runs exactly once,
// every other attempt is refused as replayed. A denial holds in both.
func TestApprovalsReplicasRaceOneApprovedCall(t *testing.T) {
	srv := startRedis(t)
	var runs atomic.Int64
	ra := newAprReplica(newReplica(t, srv).Store.Approvals(), &runs)
	rb := newAprReplica(newReplica(t, srv).Store.Approvals(), &runs)
	approvaltest.TestReplicasRace(t, ra, rb)
	const rounds = 5

	// Denied through one replica, the call is denied through the other.
	err := rb.Call("call_denied")
	req, gerr := ra.Desk.Get(context.Background(), taxonomy.InfoOf(err).Approval.ID)
	aprMust(t, gerr)
	aprMust(t, ra.Desk.Deny(context.Background(), req))
	if c := taxonomy.InfoOf(rb.Call("call_denied")).Code; c != taxonomy.CodeApprovalDenied {
		t.Fatalf("the denied call: %s, want approval_denied", c)
	}
	if runs.Load() != rounds {
		t.Fatalf("%d executions, want %d", runs.Load(), rounds)
	}
}

// An approval revoked by a Deny, its row then written back with a raw SET
// by someone with write access to Redis but not the Desk's key (a restored
// snapshot, say), is refused as replayed and never runs (issue 26, item
// 5); so is an approved row written back after its use.
func TestApprovalsRowWrittenBackWithRawSet(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv, redisstate.WithPrefix("raw:"))
	var runs atomic.Int64
	rep := newAprReplica(r.Store.Approvals(), &runs)
	ctx := context.Background()
	// approve files callID's request, approves it and returns its id, its
	// Redis key (the documented scheme) and the approved row as stored.
	approve := func(callID string) (string, string, []byte) {
		t.Helper()
		id := taxonomy.InfoOf(rep.Call(callID)).Approval.ID
		req, err := rep.Desk.Get(ctx, id)
		aprMust(t, err)
		aprMust(t, rep.Desk.Approve(ctx, req, time.Hour))
		sum := sha256.Sum256([]byte(id))
		key := "raw:apr:" + hex.EncodeToString(sum[:16])
		row, err := r.Client.Get(ctx, key).Bytes()
		aprMust(t, err)
		return id, key, row
	}

	id, key, approved := approve("call_revoked")
	req, err := rep.Desk.Get(ctx, id)
	aprMust(t, err)
	aprMust(t, rep.Desk.Deny(ctx, req))
	aprMust(t, r.Client.Set(ctx, key, approved, 0).Err())
	if c := taxonomy.InfoOf(rep.Call("call_revoked")).Code; c != taxonomy.CodeApprovalReplayed || runs.Load() != 0 {
		t.Fatalf("the revoked approval written back: %s, %d executions; want approval_replayed, 0", c, runs.Load())
	}

	_, key, approved = approve("call_used")
	aprMust(t, rep.Call("call_used"))
	aprMust(t, r.Client.Set(ctx, key, approved, 0).Err())
	if c := taxonomy.InfoOf(rep.Call("call_used")).Code; c != taxonomy.CodeApprovalReplayed || runs.Load() != 1 {
		t.Fatalf("the used approval written back: %s, %d executions; want approval_replayed, 1", c, runs.Load())
	}
}

// With Redis gone, an approved call fails closed: approval_store_failed,
// and the tool does not run. Nothing falls back to local state.
func TestApprovalsFailClosedWhenRedisIsDown(t *testing.T) {
	srv := startRedis(t)
	var runs atomic.Int64
	r := newAprReplica(newReplica(t, srv).Store.Approvals(), &runs, store.WithTimeout(200*time.Millisecond))
	r.Approve(t, "call_1")
	srv.Kill()
	err := r.Call("call_1")
	if c := taxonomy.InfoOf(err).Code; c != taxonomy.CodeApprovalStoreFailed || runs.Load() != 0 {
		t.Fatalf("with Redis down: %v (%s), %d executions; want approval_store_failed, 0", err, c, runs.Load())
	}
}

// A decision written through one client is read through a new one, after
// the first is closed.
func TestApprovalsDecisionOutlivesTheClient(t *testing.T) {
	srv := startRedis(t)
	var runs atomic.Int64
	first := newReplica(t, srv)
	newAprReplica(first.Store.Approvals(), &runs).Approve(t, "call_1")
	aprMust(t, first.Client.Close())
	r := newAprReplica(newReplica(t, srv).Store.Approvals(), &runs)
	if err := r.Call("call_1"); err != nil || runs.Load() != 1 {
		t.Fatalf("the approved call through a new client: %v, %d executions", err, runs.Load())
	}
}

// BenchmarkApprovedCallRedis measures an approved call through the
// approval layer on Redis: the row's load and check, the nonce's SET NX,
// the used row's compare-and-swap, and the tool. Filing and approving are
// not timed.
func BenchmarkApprovedCallRedis(b *testing.B) {
	srv := startRedis(b)
	var runs atomic.Int64
	r := newAprReplica(newReplica(b, srv).Store.Approvals(), &runs)
	b.ReportAllocs()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		callID := fmt.Sprintf("bench_%d", i)
		r.Approve(b, callID)
		b.StartTimer()
		err := r.Call(callID)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
	}
	if runs.Load() != int64(b.N) {
		b.Fatalf("%d executions for %d approved calls", runs.Load(), b.N)
	}
}

func aprMust(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func aprLoad(t testing.TB, s approval.Store, id, want string) {
	t.Helper()
	got, err := s.Load(context.Background(), id)
	if err != nil || string(got) != want {
		t.Fatalf("Load(%q) = %q, %v; want %q", id, got, err, want)
	}
}

// approvalStoreTimeout is the approval layer's store timeout in the tests
// of a Consume answered late: long enough for an answer on a loaded
// machine, and the length of the stall that outlasts it.
const approvalStoreTimeout = 2 * loadSlack

// nonceKey returns the Redis key of nonce's record under prefix: the
// documented scheme.
func nonceKey(prefix, nonce string) string {
	sum := sha256.Sum256([]byte(nonce))
	return prefix + "aprn:" + hex.EncodeToString(sum[:16])
}

// stallingApprovals stalls the server (SIGSTOP) at the next Consume once
// armed, for longer than the layer's store timeout, so the Consume's
// answer never arrives in time; then resumes the server and waits until
// the late Consume has landed before it returns the timeout to the layer.
type stallingApprovals struct {
	approval.Store
	t      *testing.T
	srv    *redisServer
	raw    *replica
	prefix string
	armed  atomic.Bool
	hit    atomic.Bool
}

func (s *stallingApprovals) Consume(ctx context.Context, nonce, op string) error {
	if !s.armed.CompareAndSwap(true, false) {
		return s.Store.Consume(ctx, nonce, op)
	}
	s.hit.Store(true)
	resume := s.srv.Stall()
	err := s.Store.Consume(ctx, nonce, op)
	if rerr := resume(); rerr != nil {
		s.t.Errorf("resume redis-server: %v", rerr)
	}
	if err == nil {
		s.t.Error("a Consume on a stalled server succeeded")
	}
	// The SET sent before the stall lands now: wait for it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		n, _ := s.raw.Client.Exists(context.Background(), nonceKey(s.prefix, nonce)).Result()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			s.t.Error("the Consume sent before the stall never landed")
			break
		}
	}
	return err
}

// TestApprovalsConsumeAnsweredLate (issue 35, item 3): Redis stalls while a
// call consumes its approval, for longer than the layer's store timeout,
// and executes the Consume when it resumes. The call fails closed
// (approval_store_failed, the tool does not run), and the approval is not
// lost: the same call made again runs exactly once.
func TestApprovalsConsumeAnsweredLate(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv, redisstate.WithPrefix("late:"))
	stalling := &stallingApprovals{Store: r.Store.Approvals(), t: t, srv: srv, raw: r, prefix: "late:"}
	var runs atomic.Int64
	rep := newAprReplica(stalling, &runs, store.WithTimeout(approvalStoreTimeout))
	rep.Approve(t, "call_warm")
	aprMust(t, rep.Call("call_warm")) // the Consume's script is loaded
	runs.Store(0)
	rep.Approve(t, "call_1")
	// The stall must meet the Consume: a call that failed before it (a
	// load slower than the store timeout on a loaded machine) is made
	// again.
	var err error
	for try := 0; !stalling.hit.Load(); try++ {
		if try == 5 {
			t.Fatalf("the call never reached its Consume: %v", err)
		}
		rep.Rest() // after a failure, the store rests
		stalling.armed.Store(true)
		err = rep.Call("call_1")
	}
	stalling.armed.Store(false)
	if c := taxonomy.InfoOf(err).Code; c != taxonomy.CodeApprovalStoreFailed || runs.Load() != 0 {
		t.Fatalf("the call whose Consume was answered late: %v (%s), %d executions; want approval_store_failed, 0", err, c, runs.Load())
	}
	rep.Rest()
	if err := rep.Call("call_1"); err != nil || runs.Load() != 1 {
		t.Fatalf("the approved call made again: %v (%s), %d executions; want it to run once (the late Consume lost the approval)",
			err, taxonomy.InfoOf(err).Code, runs.Load())
	}
	if c := taxonomy.InfoOf(rep.Call("call_1")).Code; c != taxonomy.CodeApprovalReplayed || runs.Load() != 1 {
		t.Fatalf("the call a third time: %s, %d executions; want approval_replayed, 1", c, runs.Load())
	}
}

// lateSend holds the next command sent to a nonce's key once armed: it
// waits until the command's context ends, answers with its error, and
// keeps the command to be sent later, when the test says (a request
// delayed in the network, which Redis executes after the client gave up).
type lateSend struct {
	prefix string
	armed  atomic.Bool
	held   chan func() error
}

func (h *lateSend) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *lateSend) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *lateSend) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		touches := false
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && strings.HasPrefix(s, h.prefix+"aprn:") {
				touches = true
			}
		}
		if !touches || !h.armed.CompareAndSwap(true, false) {
			return next(ctx, cmd)
		}
		<-ctx.Done()
		late := redis.NewCmd(context.Background(), cmd.Args()...)
		h.held <- func() error { return next(context.Background(), late) }
		cmd.SetErr(ctx.Err())
		return ctx.Err()
	}
}

// TestApprovalsConsumeSentLate: the call's Consume reaches Redis only after
// the call gave up on it. The call fails closed, the late Consume, when
// Redis executes it, consumes nothing, and the same call made again runs
// exactly once.
func TestApprovalsConsumeSentLate(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv, redisstate.WithPrefix("sent:"))
	hook := &lateSend{prefix: "sent:", held: make(chan func() error, 1)}
	r.Client.AddHook(hook)
	var runs atomic.Int64
	rep := newAprReplica(r.Store.Approvals(), &runs, store.WithTimeout(approvalStoreTimeout))
	rep.Approve(t, "call_warm")
	aprMust(t, rep.Call("call_warm")) // the scripts are loaded
	rep.Approve(t, "call_1")
	hook.armed.Store(true)
	err := rep.Call("call_1")
	if c := taxonomy.InfoOf(err).Code; c != taxonomy.CodeApprovalStoreFailed || runs.Load() != 1 {
		t.Fatalf("the call whose Consume was held: %v (%s), %d executions; want approval_store_failed, 1", err, c, runs.Load())
	}
	select {
	case send := <-hook.held:
		if err := send(); err != nil {
			t.Fatalf("the late Consume: %v", err)
		}
	default:
		t.Fatal("no Consume was held")
	}
	rep.Rest() // the failure rested the store
	if err := rep.Call("call_1"); err != nil || runs.Load() != 2 {
		t.Fatalf("the approved call made again: %v (%s), %d executions; want it to run (the late Consume lost the approval)",
			err, taxonomy.InfoOf(err).Code, runs.Load())
	}
	if c := taxonomy.InfoOf(rep.Call("call_1")).Code; c != taxonomy.CodeApprovalReplayed || runs.Load() != 2 {
		t.Fatalf("the call a third time: %s, %d executions; want approval_replayed, 2", c, runs.Load())
	}
}

// stallAtConsume stalls the server (SIGSTOP) at the first Consume sent
// through the clients it hooks once armed: before sending it (every
// Consume of the race then waits for the stall and reaches a stopped
// server), or after its answer came (that caller has its approval and
// runs; every other Consume reaches a stopped server).
type stallAtConsume struct {
	srv     *redisServer
	prefix  string
	after   bool // stall after the first Consume's answer
	mu      sync.Mutex
	armed   bool
	first   bool
	stalled chan struct{}
	resume  func() error
}

func (h *stallAtConsume) arm(after bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed, h.first, h.after, h.stalled, h.resume = true, true, after, make(chan struct{}), nil
}

// disarm stops stalling and returns the function that resumes the server,
// nil when it was not stalled.
func (h *stallAtConsume) disarm() func() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = false
	return h.resume
}

func (h *stallAtConsume) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *stallAtConsume) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *stallAtConsume) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		touches := false
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && strings.HasPrefix(s, h.prefix+"aprn:") {
				touches = true
			}
		}
		h.mu.Lock()
		armed, first, stalled, after := h.armed, h.first, h.stalled, h.after
		if touches && armed {
			h.first = false
		}
		h.mu.Unlock()
		if !touches || !armed {
			return next(ctx, cmd)
		}
		if !first {
			<-stalled
			return next(ctx, cmd)
		}
		var err error
		if after {
			err = next(ctx, cmd)
		}
		resume := h.srv.Stall()
		h.mu.Lock()
		h.resume = resume
		h.mu.Unlock()
		close(stalled)
		if after {
			return err
		}
		return next(ctx, cmd)
	}
}

// warmPool makes client hold n idle connections: it takes n at once
// (each answers a PING), then gives them back to the pool.
func warmPool(t *testing.T, client *redis.Client, n int) {
	t.Helper()
	conns := make([]*redis.Conn, n)
	for i := range conns {
		conns[i] = client.Conn()
		if err := conns[i].Ping(context.Background()).Err(); err != nil {
			t.Errorf("warming the pool: %v", err)
		}
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

// TestApprovalsRaceThroughAStall: 16 callers on two replicas race for one
// approved call while Redis stalls, for longer than the layer's store
// timeout, at the first Consume: before it (no caller hears an answer:
// each fails closed, and Redis executes every Consume, and every undoing
// of one, when it resumes) or after its answer (that caller runs; every
// other Consume and undoing lands late). Either way the call runs exactly
// once in all: the approval is not lost, and the Consume that landed in
// time and ran is never undone.
func TestApprovalsRaceThroughAStall(t *testing.T) {
	srv := startRedis(t)
	hook := &stallAtConsume{srv: srv, prefix: "stall:"}
	var runs atomic.Int64
	const callers = 16
	racers := make([]*approvaltest.Replica, 2)
	clients := make([]*redis.Client, 2)
	stores := make([]approval.Store, 2)
	for i := range racers {
		r := newReplica(t, srv, redisstate.WithPrefix("stall:"))
		r.Client.AddHook(hook)
		clients[i], stores[i] = r.Client, r.Store.Approvals()
	}
	settle := newAprReplica(newReplica(t, srv, redisstate.WithPrefix("stall:")).Store.Approvals(), &runs,
		store.WithTimeout(approvalStoreTimeout))
	settle.Approve(t, "call_warm")
	aprMust(t, settle.Call("call_warm")) // the Consume's script is loaded
	runs.Store(0)
	for round, after := range []bool{false, true, false, true} {
		callID := fmt.Sprintf("call_stall_%d", round)
		settle.Approve(t, callID)
		before := runs.Load()
		// New Desks each round: the last round's failures rested the
		// others' stores, and the Cancels they keep trying would take
		// the idle connections this round's need.
		for i := range racers {
			racers[i] = newAprReplica(stores[i], &runs, store.WithTimeout(500*time.Millisecond))
		}
		// A replica in production has idle connections: a caller whose
		// Consume timed out (its connection closed) sends its Cancel on
		// another, which Redis executes when it resumes. A new connection
		// would wait for the stalled server to answer its handshake.
		for _, c := range clients {
			warmPool(t, c, callers)
		}
		hook.arm(after)
		var wg sync.WaitGroup
		var ran atomic.Int64
		start := make(chan struct{})
		for i := range callers {
			wg.Go(func() {
				<-start
				if racers[i%2].Call(callID) == nil {
					ran.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		resume := hook.disarm()
		if resume == nil {
			t.Fatalf("round %d: no caller reached its Consume", round)
		}
		aprMust(t, resume())
		if after && ran.Load() != 1 {
			t.Fatalf("round %d: %d callers ran before the stall, want 1", round, ran.Load())
		}
		if !after && ran.Load() != 0 {
			t.Fatalf("round %d: %d callers ran while Redis was stalled, want 0", round, ran.Load())
		}
		// The late Consumes and their undoing land: the approval runs once
		// more if none ran, and never again after that.
		var last error
		for try := 0; try < 20 && runs.Load()-before == 0; try++ {
			last = settle.Call(callID)
			if last != nil {
				settle.Rest()
				time.Sleep(50 * time.Millisecond)
			}
		}
		time.Sleep(100 * time.Millisecond)
		for range 3 {
			if c := taxonomy.InfoOf(settle.Call(callID)).Code; c != taxonomy.CodeApprovalReplayed {
				t.Fatalf("round %d: a call after the approval ran: %s, want approval_replayed", round, c)
			}
		}
		if n := runs.Load() - before; n != 1 {
			t.Fatalf("round %d (stall after the first answer: %v): %d executions, want 1; the last call: %v", round, after, n, last)
		}
	}
}

// A listed id whose row is gone (expired, deleted) is dropped from the
// list of ids by the listing that finds it so.
func TestApprovalsListDropsGoneRows(t *testing.T) {
	r := newReplica(t, startRedis(t), redisstate.WithPrefix("lst:"))
	a := r.Store.Approvals()
	ctx := context.Background()
	for _, id := range []string{"apr_1", "apr_2", "apr_3"} {
		aprMust(t, a.Save(ctx, id, nil, []byte("row "+id)))
	}
	keys, err := r.Client.Keys(ctx, "lst:apr:*").Result()
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys %q, %v", keys, err)
	}
	aprMust(t, r.Client.Del(ctx, keys[0]).Err())
	rows, err := a.(approval.Lister).List(ctx, "", 10)
	if err != nil || len(rows) != 2 {
		t.Fatalf("List = %d rows, %v; want 2", len(rows), err)
	}
	if n, err := r.Client.ZCard(ctx, "lst:apri").Result(); err != nil || n != 2 {
		t.Fatalf("the list of ids holds %d, %v; want 2", n, err)
	}
}
