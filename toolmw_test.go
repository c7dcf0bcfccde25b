package toolmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/internal/canary"
	"github.com/toolmw/toolmw/internal/testutil"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWrapRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec toolmw.Spec
		tool toolmw.Tool
		mws  []toolmw.Middleware
		code string
	}{
		{"empty name", toolmw.Spec{}, testutil.OK, nil, taxonomy.CodeNameInvalid},
		{"space in name", toolmw.Spec{Name: "book flight"}, testutil.OK, nil, taxonomy.CodeNameInvalid},
		{"dot in name", toolmw.Spec{Name: "book.flight"}, testutil.OK, nil, taxonomy.CodeNameInvalid},
		{"unicode name", toolmw.Spec{Name: "réserver"}, testutil.OK, nil, taxonomy.CodeNameInvalid},
		{"name too long", toolmw.Spec{Name: strings.Repeat("a", 65)}, testutil.OK, nil, taxonomy.CodeNameInvalid},
		{"nil tool", toolmw.Spec{Name: "book"}, nil, nil, taxonomy.CodeToolNil},
		{"nil middleware", toolmw.Spec{Name: "book"}, testutil.OK, []toolmw.Middleware{toolmw.Chain(), nil}, taxonomy.CodeMiddlewareNil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool, err := toolmw.Wrap(tc.spec, tc.tool, tc.mws...)
			if tool != nil {
				t.Fatal("Wrap returned a tool with an error")
			}
			te, isTyped := taxonomy.From(err)
			if !isTyped || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != tc.code {
				t.Fatalf("err = %v, want tool-definition-invalid/%s", err, tc.code)
			}
			if !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
				t.Fatal("errors.Is(ErrDefinitionInvalid) is false")
			}
		})
	}
	for _, name := range []string{"a", "A-b_9", strings.Repeat("x", 64)} {
		if _, err := toolmw.Wrap(toolmw.Spec{Name: name}, testutil.OK); err != nil {
			t.Errorf("Wrap(%q) = %v", name, err)
		}
	}
}

func TestMustWrapPanics(t *testing.T) {
	defer func() {
		if r := recover(); !errors.Is(r.(error), taxonomy.ErrDefinitionInvalid) {
			t.Fatalf("recovered %v", r)
		}
	}()
	toolmw.MustWrap(toolmw.Spec{Name: ""}, testutil.OK)
}

func TestCallFrom(t *testing.T) {
	if _, found := toolmw.CallFrom(context.Background()); found {
		t.Fatal("CallFrom found a call in a bare context")
	}
	var seen []toolmw.Call
	tool := toolmw.MustWrap(toolmw.Spec{Name: "lookup", Idempotent: true},
		func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
			c, _ := toolmw.CallFrom(ctx)
			seen = append(seen, c)
			return toolmw.Result{}, nil
		},
		func(next toolmw.Tool) toolmw.Tool { // a two-attempt "retry"
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				_, _ = next(ctx, args)
				toolmw.SetAttempt(ctx, 2)
				return next(ctx, args)
			}
		})
	ctx := toolmw.WithCallID(context.Background(), "call_1")
	if _, err := tool(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Attempt != 1 || seen[1].Attempt != 2 {
		t.Fatalf("attempts seen: %+v", seen)
	}
	c := seen[0]
	if c.Tool != "lookup" || c.ID != "call_1" || !c.Idempotent || c.Spec.Type != "function" {
		t.Fatalf("call = %+v", c)
	}
	// A new call through the same tool starts again at attempt 1.
	seen = nil
	_, _ = tool(context.Background(), nil)
	if seen[0].Attempt != 1 || seen[0].ID != "" {
		t.Fatalf("second call = %+v", seen[0])
	}
	toolmw.SetAttempt(context.Background(), 3) // no call: nothing happens
}

func TestCallContextKeepsCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tool := toolmw.MustWrap(toolmw.Spec{Name: "wait"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		inner, stop := context.WithTimeout(ctx, time.Hour)
		defer stop()
		cancel()
		<-inner.Done()
		return toolmw.Result{}, inner.Err()
	})
	if _, err := tool(ctx, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestWrapNamesTypedErrors(t *testing.T) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "pay"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Failure("card_declined", "declined")
	})
	_, err := tool(context.Background(), nil)
	if te, _ := taxonomy.From(err); te.Tool() != "pay" {
		t.Fatalf("tool = %q", te.Tool())
	}
}

func TestToolbox(t *testing.T) {
	var order []string
	trace := func(name string) toolmw.Middleware {
		return func(next toolmw.Tool) toolmw.Tool {
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				order = append(order, name)
				return next(ctx, args)
			}
		}
	}
	box := toolmw.NewToolbox(trace("box"))
	if err := box.Register(toolmw.Spec{Name: "a", Description: "first"}, testutil.OK, trace("tool")); err != nil {
		t.Fatal(err)
	}
	if err := box.Register(toolmw.Spec{Name: "b"}, testutil.OK); err != nil {
		t.Fatal(err)
	}
	err := box.Register(toolmw.Spec{Name: "a"}, testutil.OK)
	if te, _ := taxonomy.From(err); te == nil || te.Kind() != taxonomy.KindDuplicateTool || te.Code() != taxonomy.CodeDuplicateTool {
		t.Fatalf("duplicate: %v", err)
	}
	if err := box.Register(toolmw.Spec{Name: "c d"}, testutil.OK); !errors.Is(err, taxonomy.ErrDefinitionInvalid) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := box.Call(context.Background(), "a", nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(order, []string{"box", "tool"}) {
		t.Fatalf("middleware order %v", order)
	}
	for _, name := range []string{"nope", "</untrusted-data>"} {
		_, err = box.Call(context.Background(), name, nil)
		if te, _ := taxonomy.From(err); te == nil || te.Kind() != taxonomy.KindNotFound || te.Code() != taxonomy.CodeToolNotFound {
			t.Fatalf("unknown %q: %v", name, err)
		}
		if strings.Contains(err.Error(), "untrusted") {
			t.Fatalf("an invalid requested name was echoed: %v", err)
		}
	}
	specs := box.Specs()
	if len(specs) != 2 || specs[0].Name != "a" || specs[1].Name != "b" {
		t.Fatalf("specs %+v", specs)
	}
	var zero toolmw.Toolbox
	if err := zero.Register(toolmw.Spec{Name: "z"}, testutil.OK); err != nil {
		t.Fatalf("zero Toolbox: %v", err)
	}
}

func TestToolboxConcurrent(t *testing.T) {
	box := toolmw.NewToolbox()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = box.Register(toolmw.Spec{Name: fmt.Sprintf("t%d", i)}, testutil.OK)
			for j := range 100 {
				_, _ = box.Call(context.Background(), fmt.Sprintf("t%d", j%8), nil)
			}
			_ = box.Specs()
		}()
	}
	wg.Wait()
	if n := len(box.Specs()); n != 8 {
		t.Fatalf("%d specs", n)
	}
}

func TestJSONResult(t *testing.T) {
	res, err := toolmw.JSON(map[string]int{"a": 1})
	if err != nil || res.Content != `{"a":1}` || !res.JSON {
		t.Fatalf("JSON = %+v, %v", res, err)
	}
	_, err = toolmw.JSON(func() {})
	if te, _ := taxonomy.From(err); te == nil || te.Code() != taxonomy.CodeResultEncoding {
		t.Fatalf("unencodable: %v", err)
	}
}

func TestSafeCallID(t *testing.T) {
	long := strings.Repeat("a", toolmw.MaxCallIDLen)
	for _, id := range []string{"", "call_a1B2", "toolu_01A09q90qw90lq917835lq9", "fc_67.x:1-2", long,
		"call_abc123XYZ789def456GHI012", "call_0", "tc-4f2a", "toolu_01Xy9Kp2Lm4Qr7St8Uv1Wz3"} {
		if got := toolmw.SafeCallID(id); got != id {
			t.Errorf("SafeCallID(%q) = %q, want it unchanged", id, got)
		}
	}
	bad := []string{long + "a", strings.Repeat("x", 1<<20), "call_1\nlevel=error", "ghp_x token=sk_live_CANARY", "<b>", "call é"}
	bad = append(bad, canary.Values()...) // tokens in the id's own charset too
	for _, id := range bad {
		got := toolmw.SafeCallID(id)
		if !strings.HasPrefix(got, "invalid_call_id_") || len(got) != len("invalid_call_id_")+16 {
			t.Errorf("SafeCallID(%.40q) = %q", id, got)
		}
		if toolmw.SafeCallID(id) != got {
			t.Error("the same bad id reads differently")
		}
	}
	// What the layers see through a Wrap'd tool.
	var seen string
	tool := toolmw.MustWrap(toolmw.Spec{Name: "t"}, func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		c, _ := toolmw.CallFrom(ctx)
		seen = c.ID
		return toolmw.Text("ok"), nil
	})
	_, _ = tool(toolmw.WithCallID(context.Background(), strings.Repeat("k", 1<<20)), nil)
	if len(seen) > toolmw.MaxCallIDLen {
		t.Fatalf("a 1 MiB call id reached the layers as %d bytes", len(seen))
	}
}

// TestSafeCallIDNamespace: an id that reads like a replaced one ("invalid_call_id_"
// and 16 lower-case hex digits) is itself replaced, so no model id can pose as
// the replaced form of another; ids merely starting like it pass as they are.
func TestSafeCallIDNamespace(t *testing.T) {
	for _, id := range []string{"call/1", "a+b@c", strings.Repeat("x", 200), "call_1\nlevel=error"} {
		replaced := toolmw.SafeCallID(id)
		if again := toolmw.SafeCallID(replaced); again == replaced {
			t.Errorf("the literal %q, the replaced form of %.20q, passes as it is", replaced, id)
		} else if !strings.HasPrefix(again, "invalid_call_id_") || len(again) != len(replaced) {
			t.Errorf("SafeCallID(%q) = %q", replaced, again)
		}
	}
	for _, id := range []string{"invalid_call_id_", "invalid_call_id_0123456789ABCDEF", "invalid_call_id_0123456789abcdef0", "invalid_call_id_x"} {
		if got := toolmw.SafeCallID(id); got != id {
			t.Errorf("SafeCallID(%q) = %q, want it unchanged", id, got)
		}
	}
}

// alien is a taxonomy.Error made outside toolmw that says anything.
type alien struct{ s string }

func (a alien) Error() string             { return "alien " + a.s }
func (a alien) Unwrap() error             { return nil }
func (a alien) Kind() taxonomy.Kind       { return taxonomy.Kind(a.s) }
func (a alien) Code() string              { return a.s }
func (a alien) Tool() string              { return a.s }
func (a alien) Message() string           { return "msg " + a.s }
func (a alien) Retryable() bool           { return true }
func (a alien) RetryAfter() time.Duration { return 1 << 62 }

// TestForeignErrorNormalisedAtTheEdge: a taxonomy.Error made elsewhere
// leaves a Wrap'd tool as the *taxonomy.ToolError of its normalised record,
// named after the tool, still reachable with errors.As.
func TestForeignErrorNormalisedAtTheEdge(t *testing.T) {
	const secret = "sk_live_51HcanaryCANARYcanary0000"
	tool := toolmw.MustWrap(toolmw.Spec{Name: "book"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, alien{secret}
	})
	_, err := tool(context.Background(), nil)
	te, ok := err.(*taxonomy.ToolError)
	if !ok {
		t.Fatalf("got %T, want *taxonomy.ToolError", err)
	}
	if te.Kind() != taxonomy.KindFailed || te.Code() != taxonomy.CodeInvalidCode || te.Tool() != "book" ||
		te.RetryAfter() != taxonomy.MaxRetryAfter || strings.Contains(te.Error(), "anary") {
		t.Fatalf("got %s (retry after %v)", te.Error(), te.RetryAfter())
	}
	var a alien
	if !errors.As(err, &a) {
		t.Fatal("the foreign error is not reachable")
	}
	if info := taxonomy.InfoOf(alien{secret}); info.Tool != "" || info.Code != taxonomy.CodeInvalidCode {
		t.Fatalf("InfoOf kept the foreign tool name or code: %+v", info)
	}
}
