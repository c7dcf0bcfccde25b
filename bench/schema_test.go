package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
)

// The argument benchmarks: a 20-property input, and a call of about 1 KiB.

type orderLine struct {
	SKU string `json:"sku"`
	Qty int    `json:"qty"`
}

// orderArgs has 20 properties of the usual kinds.
type orderArgs struct {
	Customer string            `json:"customer"`
	Email    string            `json:"email"`
	Phone    string            `json:"phone,omitempty"`
	Street   string            `json:"street"`
	City     string            `json:"city"`
	Zip      string            `json:"zip"`
	Country  string            `json:"country"`
	Currency string            `json:"currency"`
	Total    float64           `json:"total"`
	Discount float64           `json:"discount,omitempty"`
	Count    int               `json:"count"`
	Priority int8              `json:"priority"`
	Express  bool              `json:"express"`
	Gift     bool              `json:"gift,omitempty"`
	Note     *string           `json:"note"`
	At       time.Time         `json:"at"`
	Lines    []orderLine       `json:"lines"`
	Tags     []string          `json:"tags,omitempty"`
	Meta     map[string]string `json:"meta,omitempty"`
	Channel  string            `json:"channel"`
}

// orderCall is a valid call of orderArgs, about 1 KiB long.
var orderCall = func() json.RawMessage {
	var lines []string
	for i := range 12 {
		lines = append(lines, fmt.Sprintf(`{"sku":"SKU-%04d-XYZ","qty":%d}`, i, i+1))
	}
	s := `{"customer":"Jane Q. Customer","email":"jane@example.com","phone":"+44 20 7946 0000",` +
		`"street":"221B Baker Street","city":"London","zip":"NW1 6XE","country":"GB","currency":"GBP",` +
		`"total":1234.56,"discount":12.5,"count":12,"priority":3,"express":true,"gift":false,` +
		`"note":"leave the parcel with the neighbour at number 223 if nobody answers the door",` +
		`"at":"2026-01-02T03:04:05Z","lines":[` + strings.Join(lines, ",") + `],` +
		`"tags":["urgent","fragile","repeat-customer"],"meta":{"source":"web","campaign":"spring"},"channel":"web"}`
	return json.RawMessage(s)
}()

// BenchmarkTypedDecode measures a Typed tool's decoding of a 1 KiB call
// (the tool itself does nothing).
func BenchmarkTypedDecode(b *testing.B) {
	tool := toolmw.Typed(func(ctx context.Context, in orderArgs) (string, error) { return "", nil })
	ctx := context.Background()
	if _, err := tool(ctx, orderCall); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(orderCall)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, orderCall); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdlibDecode is encoding/json's plain Unmarshal of the same call,
// for scale: no strictness, no field errors.
func BenchmarkStdlibDecode(b *testing.B) {
	b.SetBytes(int64(len(orderCall)))
	b.ReportAllocs()
	for b.Loop() {
		var in orderArgs
		if err := json.Unmarshal(orderCall, &in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate is the per-call cost of checking a 1 KiB call against a
// hand-written 20-property schema (a raw tool's, a remote MCP server's):
// the checks every argument gets, then the validator.
func BenchmarkValidate(b *testing.B) {
	v, err := schema.Compile(schema.For[orderArgs]().MustRender(schema.Plain))
	if err != nil {
		b.Fatal(err)
	}
	if err := v.Validate(orderCall, 0); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(orderCall)))
	b.ReportAllocs()
	for b.Loop() {
		if err := v.Validate(orderCall, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrappedTyped is a Typed tool's call through Wrap (no layer): the
// same work as BenchmarkTypedDecode, so Wrap renders nothing per call.
func BenchmarkWrappedTyped(b *testing.B) {
	tool := toolmw.MustWrap(toolmw.Spec{Name: "order"}, toolmw.Typed(func(ctx context.Context, in orderArgs) (string, error) { return "", nil }))
	ctx := context.Background()
	b.SetBytes(int64(len(orderCall)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool(ctx, orderCall); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender is what rendering one schema costs, made fresh each time:
// the cost Wrap pays once per tool and Definitions once per profile.
func BenchmarkRender(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := schema.For[orderArgs]().Render(schema.Plain); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDefinitions is listing a Toolbox's definitions again: the
// renderings are kept, so it copies a slice.
func BenchmarkDefinitions(b *testing.B) {
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "order"}, toolmw.Typed(func(ctx context.Context, in orderArgs) (string, error) { return "", nil })); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := box.Definitions(schema.Plain); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRenderedOnce shows that a schema is rendered once and then reused:
// two listings share the rendering's bytes, and a call allocates no more
// through Wrap than the Typed tool alone.
func TestRenderedOnce(t *testing.T) {
	box := toolmw.NewToolbox()
	if err := box.Register(toolmw.Spec{Name: "order"}, toolmw.Typed(func(ctx context.Context, in orderArgs) (string, error) { return "", nil })); err != nil {
		t.Fatal(err)
	}
	for _, p := range schema.Profiles() {
		a, errA := box.Definitions(p)
		c, errC := box.Definitions(p)
		if errA != nil || errC != nil {
			continue // the map field cannot be strict
		}
		if &a[0].InputSchema[0] != &c[0].InputSchema[0] {
			t.Errorf("%s: rendered twice", p)
		}
	}
	ctx := context.Background()
	typed := toolmw.Typed(func(ctx context.Context, in orderArgs) (string, error) { return "", nil })
	wrapped := toolmw.MustWrap(toolmw.Spec{Name: "order"}, typed)
	alone := testing.AllocsPerRun(50, func() { _, _ = typed(ctx, orderCall) })
	through := testing.AllocsPerRun(50, func() { _, _ = wrapped(ctx, orderCall) })
	if through > alone+3 { // Wrap's Call in the context, nothing more
		t.Fatalf("%.0f allocations through Wrap, %.0f alone: something is made per call", through, alone)
	}
}
