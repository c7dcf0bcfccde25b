package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRun(t *testing.T) {
	if err := run(); err != nil {
		t.Fatal(err)
	}
}

func Example() {
	_ = run()
	// Output:
	// before: tracing → logging → events → retry → breaker → ratelimit → timeout → recovery → redact → classify → tool
	// after:  tracing → logging → events → permit → retry → breaker → timeout → recovery → redact → classify → tool
	// check_stock  → tool-failed/inventory_down
	// check_price  → tool-failed/inventory_down
	// check_stock  → circuit-open/circuit_open
	// drop_tables  → tool-not-permitted/not_permitted
}
