package sqlstore_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	sqlstore "github.com/toolmw/toolmw/adapters/sqlstore"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/middleware/dedupe"
	"github.com/toolmw/toolmw/store"
)

// counting is a dedupe.Store that counts the operations it passes on to
// the call records: each is one statement, one round trip to the
// database.
type counting struct {
	dedupe.Store
	ops atomic.Int64
}

func (c *counting) Claim(ctx context.Context, run, key string, cl dedupe.Claim) (dedupe.Record, error) {
	c.ops.Add(1)
	return c.Store.Claim(ctx, run, key, cl)
}

func (c *counting) Renew(ctx context.Context, run, key, op string, until, now time.Time, keep time.Duration) error {
	c.ops.Add(1)
	return c.Store.Renew(ctx, run, key, op, until, now, keep)
}

func (c *counting) Finish(ctx context.Context, run, key, op string, outcome []byte, now time.Time, keep time.Duration) error {
	c.ops.Add(1)
	return c.Store.Finish(ctx, run, key, op, outcome, now, keep)
}

func (c *counting) Release(ctx context.Context, run, key, op string) error {
	c.ops.Add(1)
	return c.Store.Release(ctx, run, key, op)
}

// benchDedupedCall measures a call of a tool that does nothing through
// the dedupe layer with s's call records: "New" a call made for the first
// time (the claim of its record, the tool, the Finish of its outcome),
// "Repeat" a repeat of a call made (one claim, returning the outcome),
// and, for comparison, "InProcess" a first call on the layer's in-process
// records. It reports the statements per call (stmts/op), each one round
// trip.
func benchDedupedCall(b *testing.B, s *sqlstore.Store) {
	ctx := budget.WithRun(context.Background(), budget.WithID("run-bench"))
	args := json.RawMessage(`{"amount":10,"to":"acct_7"}`)
	pay := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Text("charged"), nil
	}
	spec := toolmw.Spec{Name: "pay", Description: "Pays."}
	for _, name := range []string{"New", "Repeat", "InProcess"} {
		b.Run(name, func(b *testing.B) {
			calls := &counting{Store: s.CallRecords()}
			mw := dedupe.New(dedupe.WithStore(calls, store.WithTimeout(time.Minute)))
			if name == "InProcess" {
				mw = dedupe.New()
			}
			tool := toolmw.MustWrap(spec, pay, mw)
			prefix := fmt.Sprintf("%s-%d-", b.Name(), time.Now().UnixNano())
			if name == "Repeat" {
				if _, err := tool(toolmw.WithCallID(ctx, prefix), args); err != nil {
					b.Fatal(err)
				}
			}
			calls.ops.Store(0)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				id := prefix
				if name != "Repeat" {
					i++
					id = fmt.Sprintf("%s%d", prefix, i)
				}
				res, err := tool(toolmw.WithCallID(ctx, id), args)
				if err != nil || res.Content != "charged" {
					b.Fatal(res.Content, err)
				}
			}
			b.ReportMetric(float64(calls.ops.Load())/float64(b.N), "stmts/op")
		})
	}
}

func BenchmarkDedupedCallSQLite(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+sync, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.db")
			db, err := sql.Open("sqlite", sqliteDSN(path)+"&_pragma=synchronous("+sync+")")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			benchDedupedCall(b, newSQLiteStore(b, db))
		})
	}
}

func BenchmarkDedupedCallPostgres(b *testing.B) {
	pg := postgres(b)
	benchDedupedCall(b, newPostgresStore(b, pg.open(b), sqlstore.WithTablePrefix(freshPrefix())))
}
