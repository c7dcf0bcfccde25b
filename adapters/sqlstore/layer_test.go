package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/middleware/approval/approvaltest"
)

// Two replicas, each with its own connection pool, race to execute one
// approved call: it runs exactly once, and every other attempt is refused
// as replayed.
func TestSQLiteReplicasRaceOneApprovedCall(t *testing.T) {
	a, b := sqlitePair(t)
	var runs atomic.Int64
	approvaltest.TestReplicasRace(t, approvaltest.NewReplica(a, testKey, &runs), approvaltest.NewReplica(b, testKey, &runs))
}

func TestPostgresReplicasRaceOneApprovedCall(t *testing.T) {
	a, b := postgresPair(t)
	var runs atomic.Int64
	approvaltest.TestReplicasRace(t, approvaltest.NewReplica(a, testKey, &runs), approvaltest.NewReplica(b, testKey, &runs))
}

// benchApprovedCall measures an approved call through the approval layer
// with store s: the load of the sealed row, its check, the Consume of its
// nonce, the write of the used row, and the tool. Filing and approving
// each call's request is not timed.
func benchApprovedCall(b *testing.B, s *sqlstore.Store) {
	var runs atomic.Int64
	r := approvaltest.NewReplica(s, testKey, &runs)
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
			if err := s.Consume(ctx, fmt.Sprintf("%s-%d", b.Name(), i), "op"); err != nil {
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
