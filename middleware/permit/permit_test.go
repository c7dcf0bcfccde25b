package permit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/permit"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type counter struct{ n atomic.Int32 }

func (c *counter) tool(context.Context, json.RawMessage) (toolmw.Result, error) {
	c.n.Add(1)
	return toolmw.Text("ok"), nil
}

func wrap(t *testing.T, name string, tool toolmw.Tool, mw toolmw.Middleware) toolmw.Tool {
	t.Helper()
	w, err := toolmw.Wrap(toolmw.Spec{Name: name}, tool, mw)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func denied(t *testing.T, err error, code string) taxonomy.Error {
	t.Helper()
	te, ok := taxonomy.From(err)
	if !ok || te.Kind() != taxonomy.KindNotPermitted || te.Code() != code || te.Retryable() {
		t.Fatalf("err = %v, want tool-not-permitted/%s, not retryable", err, code)
	}
	return te
}

func TestAllowAndDeny(t *testing.T) {
	tests := []struct {
		policy permit.Policy
		tool   string
		ok     bool
	}{
		{permit.Allow("search", "get_booking"), "search", true},
		{permit.Allow("search", "get_booking"), "book", false},
		{permit.Allow(), "search", false},
		{permit.Deny("delete_account"), "search", true},
		{permit.Deny("delete_account"), "delete_account", false},
		{permit.Deny(), "delete_account", true},
	}
	for _, tt := range tests {
		c := &counter{}
		tool := wrap(t, tt.tool, c.tool, permit.New(tt.policy))
		_, err := tool(context.Background(), nil)
		if tt.ok {
			if err != nil || c.n.Load() != 1 {
				t.Errorf("%s: err = %v, ran %d times; want it to run", tt.tool, err, c.n.Load())
			}
			continue
		}
		denied(t, err, taxonomy.CodeNotPermitted)
		if c.n.Load() != 0 {
			t.Errorf("%s: a denied call ran the tool", tt.tool)
		}
	}
}

func TestPolicyGetsTheCall(t *testing.T) {
	var got toolmw.Call
	tool := wrap(t, "book", (&counter{}).tool, permit.New(func(_ context.Context, c toolmw.Call) error {
		got = c
		return nil
	}))
	tool(toolmw.WithCallID(context.Background(), "call_7"), nil)
	if got.Tool != "book" || got.ID != "call_7" {
		t.Fatalf("policy got %+v", got)
	}
}

const secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

func TestPolicyErrors(t *testing.T) {
	typed := taxonomy.NotPermitted("booking_needs_account", "booking needs a signed-in user")
	untyped := fmt.Errorf("opa: token %s rejected", secret)
	otherKind := taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "policy store down")

	t.Run("typed not-permitted kept as is", func(t *testing.T) {
		tool := wrap(t, "book", (&counter{}).tool, permit.New(func(context.Context, toolmw.Call) error { return typed }))
		_, err := tool(context.Background(), nil)
		te := denied(t, err, "booking_needs_account")
		if !strings.Contains(err.Error(), "booking needs a signed-in user") || te.Tool() != "book" {
			t.Fatalf("err = %v, want the policy's message", err)
		}
	})
	t.Run("wrapped typed keeps its code", func(t *testing.T) {
		tool := wrap(t, "book", (&counter{}).tool, permit.New(func(context.Context, toolmw.Call) error {
			return fmt.Errorf("rule 7 (%s): %w", secret, typed)
		}))
		_, err := tool(context.Background(), nil)
		denied(t, err, "booking_needs_account")
		if strings.Contains(err.Error(), secret) || !errors.Is(err, taxonomy.ErrNotPermitted) {
			t.Fatalf("err = %v", err)
		}
	})
	for name, perr := range map[string]error{"untyped": untyped, "other kind": otherKind} {
		t.Run(name+" denies, text withheld", func(t *testing.T) {
			tool := wrap(t, "book", (&counter{}).tool, permit.New(func(context.Context, toolmw.Call) error { return perr }))
			res, err := tool(context.Background(), nil)
			denied(t, err, taxonomy.CodeNotPermitted)
			if !errors.Is(err, perr) {
				t.Fatal("the policy's error is not kept as the cause")
			}
			info, _ := json.Marshal(taxonomy.InfoOf(err))
			for _, text := range []string{err.Error(), string(info), toolmw.ForModel(res, err)} {
				if strings.Contains(text, secret) || strings.Contains(text, "policy store down") {
					t.Fatalf("the policy's error text leaks: %s", text)
				}
			}
		})
	}
}

func TestCancellationIsNotADenial(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tool := wrap(t, "book", (&counter{}).tool, permit.New(func(ctx context.Context, _ toolmw.Call) error {
		return fmt.Errorf("policy lookup: %w", ctx.Err())
	}))
	_, err := tool(ctx, nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, taxonomy.ErrNotPermitted) {
		t.Fatalf("err = %v, want the cancellation", err)
	}
	if taxonomy.OutcomeOf(err) != taxonomy.OutcomeCancelled {
		t.Fatalf("outcome = %v", taxonomy.OutcomeOf(err))
	}
}

func TestNilPolicyFailsClosed(t *testing.T) {
	c := &counter{}
	_, err := wrap(t, "search", c.tool, permit.New(nil))(context.Background(), nil)
	denied(t, err, taxonomy.CodeNotPermitted)
	if c.n.Load() != 0 {
		t.Fatal("the tool ran")
	}
}

// A permission denial and the tool's own refusal are different answers.
func TestDenialIsNotARefusal(t *testing.T) {
	refusing := func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	}
	deniedTool := wrap(t, "cancel_booking", refusing, permit.New(permit.Deny("cancel_booking")))
	allowedTool := wrap(t, "cancel_booking", refusing, permit.New(permit.Allow("cancel_booking")))

	res, denial := deniedTool(context.Background(), nil)
	res2, refusal := allowedTool(context.Background(), nil)

	if got := taxonomy.OutcomeOf(denial); got != taxonomy.OutcomeNotPermitted {
		t.Errorf("denial outcome = %q, want %q", got, taxonomy.OutcomeNotPermitted)
	}
	if got := taxonomy.OutcomeOf(refusal); got != taxonomy.OutcomeRefused {
		t.Errorf("refusal outcome = %q, want %q", got, taxonomy.OutcomeRefused)
	}
	src1, _, ok1 := toolmw.ParseEnvelope(toolmw.ForModel(res, denial))
	src2, _, ok2 := toolmw.ParseEnvelope(toolmw.ForModel(res2, refusal))
	if !ok1 || !ok2 || src1 != toolmw.SourceError || src2 != toolmw.SourceRefusal {
		t.Errorf("sources = %q, %q; want %q for the denial and %q for the refusal", src1, src2, toolmw.SourceError, toolmw.SourceRefusal)
	}
	if errors.Is(denial, taxonomy.ErrRefused) || errors.Is(refusal, taxonomy.ErrNotPermitted) {
		t.Error("the kinds match each other's sentinels")
	}
}

func TestUnwrappedTool(t *testing.T) {
	// Without Wrap the tool name is "": an allow-list denies it, a deny-list does not.
	c := &counter{}
	if _, err := permit.New(permit.Allow("search"))(c.tool)(context.Background(), nil); err == nil {
		t.Fatal("allowed a call without a tool name")
	}
	if _, err := permit.New(permit.Deny("search"))(c.tool)(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlineIsATimeoutNotADenial(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	tool := wrap(t, "book", (&counter{}).tool, permit.New(func(ctx context.Context, _ toolmw.Call) error {
		return fmt.Errorf("policy lookup: %w", ctx.Err())
	}))
	_, err := tool(ctx, nil)
	te, ok := taxonomy.From(err)
	if !ok || te.Kind() != taxonomy.KindTimeout || te.Code() != taxonomy.CodeDeadlineExceeded || te.Retryable() {
		t.Fatalf("err = %v, want tool-timeout/deadline_exceeded, not retryable", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, taxonomy.ErrNotPermitted) {
		t.Fatalf("err = %v: want a timeout matching context.DeadlineExceeded, not a denial", err)
	}
}
