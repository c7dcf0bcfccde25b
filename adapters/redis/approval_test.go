package redisstate_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	redisstate "github.com/toolmw/toolmw/adapters/redis"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/middleware/approval/approvaltest"
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
	aprMust(t, a.Consume(ctx, "n1"))
	if err := b.Consume(ctx, "n1"); !errors.Is(err, approval.ErrConsumed) {
		t.Fatalf("the other replica's Consume: %v, want ErrConsumed", err)
	}
	// A nonce equal to an id is its own key.
	aprMust(t, b.Consume(ctx, "apr_1"))
	aprLoad(t, a, "apr_1", "v3")
}

// Every key expires after ApprovalTTL, rewritten or not.
func TestApprovalsKeysExpire(t *testing.T) {
	srv := startRedis(t)
	r := newReplica(t, srv, redisstate.WithPrefix("exp:"))
	a := r.Store.Approvals()
	ctx := context.Background()
	aprMust(t, a.Save(ctx, "apr_1", nil, []byte("v1")))
	aprMust(t, a.Consume(ctx, "n1"))
	keys, err := r.Client.Keys(ctx, "exp:*").Result()
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys %q, %v; want 2", keys, err)
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
		"Consume nonce": a.Consume(ctx, long),
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
	aprMust(t, a.Consume(ctx, atBound))
}

var aprKey = []byte("0123456789abcdef0123456789abcdef")

func newAprReplica(s approval.Store, runs *atomic.Int64, opts ...approval.Option) *approvaltest.Replica {
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
	r := newAprReplica(newReplica(t, srv).Store.Approvals(), &runs, approval.WithStoreTimeout(200*time.Millisecond))
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
