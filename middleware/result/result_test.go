package result_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unsafe"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/result"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func returning(res toolmw.Result, err error) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) { return res, err }
}

func TestChecks(t *testing.T) {
	tests := []struct {
		name     string
		spec     toolmw.Spec
		res      toolmw.Result
		opts     []result.Option
		wantCode string // "" for success
	}{
		{"text", toolmw.Spec{}, toolmw.Text("3 hotels"), nil, ""},
		{"empty text", toolmw.Spec{}, toolmw.Text(""), nil, ""},
		{"at the default cap", toolmw.Spec{}, toolmw.Text(strings.Repeat("a", result.DefaultMaxBytes)), nil, ""},
		{"over the default cap", toolmw.Spec{}, toolmw.Text(strings.Repeat("a", result.DefaultMaxBytes+1)), nil, taxonomy.CodeResultTooLarge},
		{"at a set cap", toolmw.Spec{}, toolmw.Text("12345"), []result.Option{result.WithMaxBytes(5)}, ""},
		{"over a set cap", toolmw.Spec{}, toolmw.Text("123456"), []result.Option{result.WithMaxBytes(5)}, taxonomy.CodeResultTooLarge},
		{"cap counts bytes", toolmw.Spec{}, toolmw.Text("ééé"), []result.Option{result.WithMaxBytes(5)}, taxonomy.CodeResultTooLarge},
		{"invalid byte", toolmw.Spec{}, toolmw.Text("ok \xff"), nil, taxonomy.CodeResultNotUTF8},
		{"truncated rune", toolmw.Spec{}, toolmw.Text("caf\xc3"), nil, taxonomy.CodeResultNotUTF8},
		{"surrogate", toolmw.Spec{}, toolmw.Text("\xed\xa0\x80"), nil, taxonomy.CodeResultNotUTF8},
		{"JSON result", toolmw.Spec{}, toolmw.Result{Content: `{"n":1}`, JSON: true}, nil, ""},
		{"broken JSON result", toolmw.Spec{}, toolmw.Result{Content: `{"n":1`, JSON: true}, nil, taxonomy.CodeResultNotJSON},
		{"two JSON documents", toolmw.Spec{}, toolmw.Result{Content: `{} {}`, JSON: true}, nil, taxonomy.CodeResultNotJSON},
		{"empty JSON result", toolmw.Spec{}, toolmw.Result{Content: ``, JSON: true}, nil, taxonomy.CodeResultNotJSON},
		{"spec declares JSON", toolmw.Spec{ResultJSON: true}, toolmw.Text(`[1,2]`), nil, ""},
		{"spec declares JSON, text comes", toolmw.Spec{ResultJSON: true}, toolmw.Text(`3 hotels`), nil, taxonomy.CodeResultNotJSON},
		{"text not declared JSON", toolmw.Spec{}, toolmw.Text(`{"n":`), nil, ""},
		{"size before UTF-8", toolmw.Spec{}, toolmw.Text("\xff\xff"), []result.Option{result.WithMaxBytes(1)}, taxonomy.CodeResultTooLarge},
		{"UTF-8 before JSON", toolmw.Spec{}, toolmw.Result{Content: "\"\xff\"", JSON: true}, nil, taxonomy.CodeResultNotUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Name = "search"
			tool := toolmw.MustWrap(tt.spec, returning(tt.res, nil), result.New(tt.opts...))
			res, err := tool(context.Background(), nil)
			if tt.wantCode == "" {
				if err != nil || res != tt.res {
					t.Fatalf("got %.40q, %v; want the result untouched", res.Content, err)
				}
				return
			}
			te, ok := taxonomy.From(err)
			if !ok || te.Kind() != taxonomy.KindResultInvalid || te.Code() != tt.wantCode || te.Retryable() || te.Tool() != "search" {
				t.Fatalf("err = %v, want search: tool-result-invalid/%s, permanent", err, tt.wantCode)
			}
			if res != (toolmw.Result{}) {
				t.Fatal("an invalid result was passed on")
			}
		})
	}
}

func TestToolErrorPassesThrough(t *testing.T) {
	want := taxonomy.Refusal("no_seats", "the flight is full")
	partial := toolmw.Text("\xff partial")
	tool := result.New(result.WithMaxBytes(1), result.WithScrub(scrub.Default()))(returning(partial, want))
	res, err := tool(context.Background(), nil)
	if err != want || res != partial {
		t.Fatalf("got %+v, %v; want the tool's result and error untouched", res, err)
	}
}

const secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

func TestScrub(t *testing.T) {
	mw := result.New(result.WithScrub(scrub.Default()))

	clean := toolmw.Result{Content: `{"hotel":"Central","stars":4}`, JSON: true}
	res, err := mw(returning(clean, nil))(context.Background(), nil)
	if err != nil || res != clean || unsafe.StringData(res.Content) != unsafe.StringData(clean.Content) {
		t.Fatalf("clean content changed: %+v, %v", res, err)
	}

	dirty := toolmw.Result{Content: `{"note":"use token ` + secret + `"}`, JSON: true}
	res, err = mw(returning(dirty, nil))(context.Background(), nil)
	if err != nil || strings.Contains(res.Content, secret[4:]) || !res.JSON || !json.Valid([]byte(res.Content)) {
		t.Fatalf("got %+v, %v; want valid JSON without the secret", res, err)
	}

	// A card number written as a JSON number: its placeholder is not JSON.
	card := toolmw.Result{Content: `{"card":4111111111111111}`, JSON: true}
	res, err = mw(returning(card, nil))(context.Background(), nil)
	if err != nil || strings.Contains(res.Content, "4111111111111111") {
		t.Fatalf("got %+v, %v; want the card redacted", res, err)
	}
	if res.JSON != json.Valid([]byte(res.Content)) {
		t.Fatalf("got %+v: JSON flag disagrees with the content", res)
	}
}

func TestValidate(t *testing.T) {
	if err := result.Validate(result.WithMaxBytes(10), result.WithScrub(nil)); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, -1} {
		err := result.Validate(result.WithMaxBytes(n))
		if te, ok := taxonomy.From(err); !ok || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != taxonomy.CodeOptionInvalid {
			t.Fatalf("WithMaxBytes(%d): Validate = %v", n, err)
		}
	}
	// New ignores the bad cap and keeps the default.
	tool := result.New(result.WithMaxBytes(0), nil)(returning(toolmw.Text("ok"), nil))
	if _, err := tool(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}
