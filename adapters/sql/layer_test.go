package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	sqlstore "github.com/toolmw/toolmw/adapters/sql"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
)

// replica is one process's view of the approval cycle: a Desk over its own
// Store, and cancel_booking wrapped by the Desk's layer.
type replica struct {
	desk *approval.Desk
	tool toolmw.Tool
}

func newReplica(s *sqlstore.Store, runs *atomic.Int64) replica {
	desk := approval.NewDesk(approval.WithStore(s), approval.WithKey(testKey))
	tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking", Description: "Cancels a booking."},
		func(context.Context, json.RawMessage) (toolmw.Result, error) {
			runs.Add(1)
			return toolmw.Text("cancelled"), nil
		}, desk.Middleware(approval.Tools("cancel_booking")))
	return replica{desk, tool}
}

// call makes the model's call callID of run "run-race".
func (r replica) call(callID string) error {
	ctx := budget.WithRun(context.Background(), budget.WithID("run-race"))
	_, err := r.tool(toolmw.WithCallID(ctx, callID), json.RawMessage(`{"booking":"B-7"}`))
	return err
}

// approve files callID's request through r and approves it, returning
// nothing until the request is approved.
func (r replica) approve(tb testing.TB, callID string) {
	err := r.call(callID)
	var te taxonomy.Error
	if !errors.As(err, &te) || te.Code() != taxonomy.CodeApprovalPending {
		tb.Fatalf("the first call: %v, want approval_pending", err)
	}
	ctx := context.Background()
	req, err := r.desk.Get(ctx, taxonomy.InfoOf(err).Approval.ID)
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.desk.Approve(ctx, req, time.Hour); err != nil {
		tb.Fatal(err)
	}
}

// testReplicasRace: two replicas, each with its own connection pool,
// race to execute one approved call: it runs exactly once, and every other
// attempt is refused as replayed.
func testReplicasRace(t *testing.T, a, b *sqlstore.Store) {
	var runs atomic.Int64
	ra, rb := newReplica(a, &runs), newReplica(b, &runs)
	const racers, rounds = 16, 5
	for round := range rounds {
		callID := fmt.Sprintf("call_%d", round)
		ra.approve(t, callID)
		before := runs.Load()
		var ok, replayed atomic.Int64
		var mu sync.Mutex
		var other []error
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range racers {
			r := ra
			if i%2 == 1 {
				r = rb
			}
			wg.Go(func() {
				<-start
				err := r.call(callID)
				var te taxonomy.Error
				switch {
				case err == nil:
					ok.Add(1)
				case errors.As(err, &te) && te.Code() == taxonomy.CodeApprovalReplayed:
					replayed.Add(1)
				default:
					mu.Lock()
					other = append(other, err)
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if n := runs.Load() - before; n != 1 || ok.Load() != 1 || replayed.Load() != racers-1 || len(other) != 0 {
			t.Fatalf("round %d: %d executions, %d successes, %d replayed, others %v; want 1, 1, %d, none",
				round, n, ok.Load(), replayed.Load(), other, racers-1)
		}
	}
}

func TestSQLiteReplicasRaceOneApprovedCall(t *testing.T) {
	a, b := sqlitePair(t)
	testReplicasRace(t, a, b)
}

func TestPostgresReplicasRaceOneApprovedCall(t *testing.T) {
	a, b := postgresPair(t)
	testReplicasRace(t, a, b)
}

// benchApprovedCall measures an approved call through the approval layer
// with store s: the load of the sealed row, its check, the Consume of its
// nonce, the write of the used row, and the tool. Filing and approving
// each call's request is not timed.
func benchApprovedCall(b *testing.B, s *sqlstore.Store) {
	var runs atomic.Int64
	r := newReplica(s, &runs)
	b.ReportAllocs()
	b.StopTimer()
	for i := 0; i < b.N; i++ {
		callID := fmt.Sprintf("bench_%d", i)
		r.approve(b, callID)
		b.StartTimer()
		err := r.call(callID)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
	}
	if runs.Load() != int64(b.N) {
		b.Fatalf("%d executions for %d approved calls", runs.Load(), b.N)
	}
}

// SQLite syncs its file at every commit by default (synchronous=FULL);
// in WAL mode synchronous=NORMAL syncs only at checkpoints, which keeps
// every commit through a crash of the process but not through a loss of
// power. An approved call commits twice (the Consume and the used row).
func BenchmarkApprovedCallSQLite(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+sync, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.db")
			db, err := sql.Open("sqlite", sqliteDSN(path)+"&_pragma=synchronous("+sync+")")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			benchApprovedCall(b, newSQLiteStore(b, db))
		})
	}
}

func BenchmarkApprovedCallPostgres(b *testing.B) {
	pg := postgres(b)
	benchApprovedCall(b, newPostgresStore(b, pg.open(b), sqlstore.WithTablePrefix(freshPrefix())))
}

// benchStore measures the store's three operations alone.
func benchStore(b *testing.B, s *sqlstore.Store) {
	ctx := context.Background()
	row := make([]byte, 512) // about the size of a sealed row
	if err := s.Save(ctx, "bench", nil, row); err != nil {
		b.Fatal(err)
	}
	b.Run("Load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Load(ctx, "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Save", func(b *testing.B) {
		b.ReportAllocs()
		next := append([]byte(nil), row...)
		for b.Loop() {
			next[0]++
			if err := s.Save(ctx, "bench", row, next); err != nil {
				b.Fatal(err)
			}
			row, next = next, row
			copy(next, row)
		}
	})
	b.Run("Consume", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			if err := s.Consume(ctx, fmt.Sprintf("%s-%d", b.Name(), i)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStoreSQLite(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bench.db")
	db, err := sql.Open("sqlite", sqliteDSN(path)+"&_pragma=synchronous(NORMAL)")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	benchStore(b, newSQLiteStore(b, db))
}

func BenchmarkStorePostgres(b *testing.B) {
	pg := postgres(b)
	benchStore(b, newPostgresStore(b, pg.open(b), sqlstore.WithTablePrefix(freshPrefix())))
}
