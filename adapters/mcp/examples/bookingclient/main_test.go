package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestInMemory runs the example against the server in-process and checks
// what the model is told for each call.
func TestInMemory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := connectAndRun(ctx, "", "", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"booking_search_flights   (MCP search_flights, idempotent true) Find flights between two airports.",
		`model is told: <untrusted-data source="tool_result">{"flights":[{"number":"TP1234","fare":"flex"`,
		`model is told: <untrusted-data source="tool_result">{"reference":"BK0001","flight":"TP1236","fare":"saver"}</untrusted-data>`,
		`tool-refused/booking_not_cancellable retryable=false`,
		`model is told: <untrusted-data source="tool_refusal">booking_not_cancellable: this fare is non-refundable</untrusted-data>`,
		`tool-args-invalid/args_invalid retryable=false`,
		`"loc":["passenger"]`,
		`tool-not-found/tool_not_found retryable=false`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
