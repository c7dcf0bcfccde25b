package ratelimittest_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/ratelimit"
	"github.com/toolmw/toolmw/middleware/ratelimit/ratelimittest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemStore(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	ratelimittest.TestStore(t, func(*testing.T) ratelimit.Store { return ratelimittest.NewMemStore(clk) })
}

// The store keeps at most MaxKeys keys whose bucket is not full; beyond, it
// refuses (the layer then decides locally), and a bucket full again makes
// room.
func TestMemStoreBound(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	m := ratelimittest.NewMemStore(clk)
	ctx := context.Background()
	r := ratelimit.Request{Interval: time.Second, Burst: 1}
	for i := range ratelimittest.MaxKeys {
		r.Key = strconv.Itoa(i)
		if _, err := m.Admit(ctx, r); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	r.Key = "one more"
	if _, err := m.Admit(ctx, r); !errors.Is(err, ratelimittest.ErrFull) {
		t.Fatalf("err = %v, want ErrFull", err)
	}
	r.Key = "0"
	if d, err := m.Admit(ctx, r); err != nil || d.Allowed {
		t.Fatalf("a kept key beyond the bound: %+v, %v; want decided (refused)", d, err)
	}
	clk.Advance(time.Second) // every bucket is full again
	r.Key = "one more"
	if d, err := m.Admit(ctx, r); err != nil || !d.Allowed {
		t.Fatalf("after the buckets filled: %+v, %v; want admitted", d, err)
	}
}

// The store's clock frees slots: one interval after a burst is used up,
// one more call is admitted.
func TestMemStoreInterval(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	m := ratelimittest.NewMemStore(clk)
	r := ratelimit.Request{Key: "k", Interval: time.Second, Burst: 2}
	admit := func() ratelimit.Decision {
		t.Helper()
		d, err := m.Admit(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	admit()
	admit()
	clk.Advance(999 * time.Millisecond)
	if d := admit(); d.Allowed || d.Wait != time.Millisecond {
		t.Fatalf("1ms before the slot: %+v, want refused with 1ms", d)
	}
	clk.Advance(time.Millisecond)
	if d := admit(); !d.Allowed || d.Wait != 0 {
		t.Fatalf("at the slot: %+v, want admitted at once", d)
	}
	if d := admit(); d.Allowed {
		t.Fatalf("a second call at the slot: %+v, want refused", d)
	}
	clk.Advance(time.Hour)
	for i := range 2 {
		if d := admit(); !d.Allowed {
			t.Fatalf("call %d after an hour: %+v, want the burst again", i+1, d)
		}
	}
}
