package classify_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/middleware/classify"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errReset = &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}

func TestIdempotencyFromSpec(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		t.Run(fmt.Sprint("idempotent=", idempotent), func(t *testing.T) {
			tool := toolmw.MustWrap(toolmw.Spec{Name: "quote", Idempotent: idempotent}, toolmwtest.Returning(toolmw.Result{}, errReset), classify.New())
			_, err := tool(context.Background(), nil)
			te, ok := taxonomy.From(err)
			if !ok {
				t.Fatalf("got %v, want a typed error", err)
			}
			if te.Code() != taxonomy.CodeConnectionReset || te.Tool() != "quote" || te.Retryable() != idempotent {
				t.Fatalf("got %v (tool %q, retryable %v)", te, te.Tool(), te.Retryable())
			}
			if !errors.Is(err, syscall.ECONNRESET) {
				t.Fatal("the cause is lost")
			}
		})
	}
}

func TestWithoutCall(t *testing.T) {
	_, err := classify.New()(toolmwtest.Returning(toolmw.Result{}, errReset))(context.Background(), nil)
	te, ok := taxonomy.From(err)
	if !ok || te.Code() != taxonomy.CodeConnectionReset || te.Tool() != "" || te.Retryable() {
		t.Fatalf("got %v", err)
	}
}

func TestPassThrough(t *testing.T) {
	typed := taxonomy.Refusal("fare_sold_out", "sold out")
	cancelled := fmt.Errorf("fetch: %w", context.Canceled)
	for _, err := range []error{typed, fmt.Errorf("wrapped: %w", typed), cancelled, nil} {
		res, got := classify.New()(toolmwtest.Returning(toolmw.Text("partial"), err))(context.Background(), nil)
		if got != err {
			t.Errorf("%v came back as %v", err, got)
		}
		if res.Content != "partial" {
			t.Errorf("the result was changed: %+v", res)
		}
	}
}

func TestWithMap(t *testing.T) {
	errSoldOut := errors.New("sold out")
	m := mapper.Default().With(mapper.Is(errSoldOut, mapper.Refusal("fare_sold_out", "the fare is sold out")))
	tests := []struct {
		name string
		opts []classify.Option
		code string
	}{
		{"custom", []classify.Option{classify.WithMap(m)}, "fare_sold_out"},
		{"default", nil, taxonomy.CodeUnmappedFailure},
		{"nil map", []classify.Option{classify.WithMap(nil)}, taxonomy.CodeUnmappedFailure},
		{"nil option", []classify.Option{nil}, taxonomy.CodeUnmappedFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := classify.New(tt.opts...)(toolmwtest.Returning(toolmw.Result{}, errSoldOut))(context.Background(), nil)
			if te, ok := taxonomy.From(err); !ok || te.Code() != tt.code {
				t.Fatalf("got %v, want code %s", err, tt.code)
			}
		})
	}
}

func TestSuccessDoesNotAllocate(t *testing.T) {
	tool := classify.New()(toolmwtest.Returning(toolmw.Text("ok"), nil))
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _, _ = tool(ctx, nil) }); n != 0 {
		t.Fatalf("success path: %v allocs", n)
	}
}

func TestSharedByManyTools(t *testing.T) {
	mw := classify.New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("tool_%d", i)
			tool := toolmw.MustWrap(toolmw.Spec{Name: name, Idempotent: i%2 == 0}, toolmwtest.Returning(toolmw.Result{}, errReset), mw)
			for range 100 {
				_, err := tool(context.Background(), nil)
				te, ok := taxonomy.From(err)
				if !ok || te.Tool() != name || te.Retryable() != (i%2 == 0) {
					t.Errorf("%s: got %v", name, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
