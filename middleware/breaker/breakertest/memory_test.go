package breakertest_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/middleware/breaker/breakertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemStore(t *testing.T) {
	clk := clock.NewFake(time.Unix(1e9, 0))
	breakertest.TestStore(t, func(*testing.T) breaker.Store { return breakertest.NewMemStore(clk) }, clk.Advance)
}

// The store keeps at most MaxKeys keys with failures; beyond, it refuses
// (the breaker then decides locally), and a key cleared by a success makes
// room again.
func TestMemStoreBound(t *testing.T) {
	m := breakertest.NewMemStore(nil)
	ctx := context.Background()
	fault := breaker.Report{Outcome: breaker.OutcomeFault, Failures: 5}
	for i := range breakertest.MaxKeys {
		if _, err := m.Report(ctx, strconv.Itoa(i), fault); err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
	}
	if m.Opens() != 0 {
		t.Fatalf("Opens = %d: faults without Trip opened a breaker", m.Opens())
	}
	if _, err := m.Report(ctx, "one more", fault); !errors.Is(err, breakertest.ErrFull) {
		t.Fatalf("err = %v, want ErrFull", err)
	}
	if _, err := m.Report(ctx, "0", breaker.Report{Outcome: breaker.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Report(ctx, "one more", fault); err != nil {
		t.Fatalf("after a key cleared: %v", err)
	}
}
