package result_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/result"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

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
			tool := toolmw.MustWrap(tt.spec, toolmwtest.Returning(tt.res, nil), result.New(tt.opts...))
			res, err := tool(context.Background(), nil)
			if tt.wantCode == "" {
				if err != nil || !reflect.DeepEqual(res, tt.res) {
					t.Fatalf("got %.40q, %v; want the result untouched", res.Content, err)
				}
				return
			}
			te, ok := taxonomy.From(err)
			if !ok || te.Kind() != taxonomy.KindResultInvalid || te.Code() != tt.wantCode || te.Retryable() || te.Tool() != "search" {
				t.Fatalf("err = %v, want search: tool-result-invalid/%s, permanent", err, tt.wantCode)
			}
			if !reflect.DeepEqual(res, toolmw.Result{}) {
				t.Fatal("an invalid result was passed on")
			}
		})
	}
}

func TestToolErrorPassesThrough(t *testing.T) {
	want := taxonomy.Refusal("no_seats", "the flight is full")
	partial := toolmw.Text("\xff partial")
	tool := result.New(result.WithMaxBytes(1))(toolmwtest.Returning(partial, want))
	res, err := tool(context.Background(), nil)
	if err != want || !reflect.DeepEqual(res, partial) {
		t.Fatalf("got %+v, %v; want the tool's result and error untouched", res, err)
	}
}

// The layer only checks: content that passes, secrets included, is
// returned as it is, not copied (the redact layer scrubs results).
func TestChecksOnly(t *testing.T) {
	const secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
	in := toolmw.Result{Content: `{"note":"use token ` + secret + `"}`, JSON: true}
	res, err := result.New()(toolmwtest.Returning(in, nil))(context.Background(), nil)
	if err != nil || !reflect.DeepEqual(res, in) || unsafe.StringData(res.Content) != unsafe.StringData(in.Content) {
		t.Fatalf("got %+v, %v; want the result as it came", res, err)
	}
}

func TestValidate(t *testing.T) {
	if err := result.Validate(nil, result.WithMaxBytes(10), result.WithMaxBytes(0)); err != nil {
		t.Fatal(err)
	}
	err := result.Validate(result.WithMaxBytes(-1))
	if te, ok := taxonomy.From(err); !ok || te.Kind() != taxonomy.KindDefinitionInvalid || te.Code() != taxonomy.CodeOptionInvalid {
		t.Fatalf("WithMaxBytes(-1): Validate = %v", err)
	}
	// Wrap reports the bad cap at start-up.
	_, err = toolmw.Wrap(toolmw.Spec{Name: "search"}, toolmwtest.Returning(toolmw.Text("ok"), nil), result.New(result.WithMaxBytes(-1)))
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid || info.Code != taxonomy.CodeOptionInvalid || info.Tool != "search" {
		t.Fatalf("Wrap with WithMaxBytes(-1) = %v, want search: tool-definition-invalid/option_invalid", err)
	}
	// 0 means the default cap.
	at := result.New(result.WithMaxBytes(0), nil)(toolmwtest.Returning(toolmw.Text(strings.Repeat("a", result.DefaultMaxBytes)), nil))
	over := result.New(result.WithMaxBytes(0), nil)(toolmwtest.Returning(toolmw.Text(strings.Repeat("a", result.DefaultMaxBytes+1)), nil))
	if _, err := at(context.Background(), nil); err != nil {
		t.Fatalf("WithMaxBytes(0), at the default cap: %v", err)
	}
	if _, err := over(context.Background(), nil); err == nil {
		t.Fatal("WithMaxBytes(0), over the default cap: no error")
	}
}
