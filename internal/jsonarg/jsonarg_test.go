package jsonarg

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw/taxonomy"
)

// The behaviour of Decode is tested end to end through toolmw.Typed
// (typed_test.go and FuzzTyped in the root package); these tests pin the
// field model and the bounds.

type inner struct {
	Shared string `json:"shared"`
	Deep   int    `json:"deep,omitempty"`
}

type outer struct {
	Shared  int    `json:"shared"` // shallower: wins over inner's
	Name    string // no tag: the Go name
	Skipped string `json:"-"`
	//lint:ignore U1000 present to show that unexported fields are ignored
	private  string
	Ptr      *int      `json:"ptr"`
	Empty    string    `json:"empty,omitempty"`
	Zero     time.Time `json:"zero,omitzero"`
	Quoted   int       `json:"quoted,string"`
	Callback func()    `json:"callback"`
	inner
}

func TestStructFields(t *testing.T) {
	type want struct {
		required bool
		kind     schemaKind
	}
	got := map[string]want{}
	var order []string
	for _, f := range schemaOf(reflect.TypeFor[outer]()).fields {
		got[f.name] = want{f.required, f.s.kind}
		order = append(order, f.name)
	}
	expect := map[string]want{
		"shared":   {true, kInt},
		"Name":     {true, kString},
		"ptr":      {false, kInt},
		"empty":    {false, kString},
		"zero":     {false, kCustom},
		"quoted":   {true, kAny},
		"callback": {false, kNever},
		"deep":     {false, kInt},
	}
	if !reflect.DeepEqual(got, expect) {
		t.Fatalf("fields %v\n got %v\nwant %v", order, got, expect)
	}
	if order[len(order)-1] != "deep" {
		t.Errorf("promoted fields come after the outer struct's: %v", order)
	}
}

func TestLocKeyCut(t *testing.T) {
	type none struct{}
	long := strings.Repeat("k", 3*maxLocKey)
	err := For(reflect.TypeFor[none]()).Decode([]byte(`{"`+long+`":1}`), &none{})
	fields := taxonomy.InfoOf(err).Fields
	if len(fields) != 1 || len(fields[0].Loc) != 1 {
		t.Fatalf("fields = %+v", fields)
	}
	if key := fields[0].Loc[0].(string); key != long[:maxLocKey]+"…" {
		t.Fatalf("loc key of %d bytes, want the first %d and an ellipsis", len(key), maxLocKey)
	}
}

func TestFieldErrorCap(t *testing.T) {
	var m map[string]int
	var b strings.Builder
	b.WriteByte('{')
	for i := range 3 * MaxFieldErrors {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `":"not a number"`)
	}
	b.WriteByte('}')
	err := For(reflect.TypeFor[map[string]int]()).Decode([]byte(b.String()), &m)
	if n := len(taxonomy.InfoOf(err).Fields); n != MaxFieldErrors {
		t.Fatalf("%d field errors, want the cap %d", n, MaxFieldErrors)
	}
}

// Nothing is decoded into dst unless every check passed.
func TestNoPartialDecode(t *testing.T) {
	type args struct {
		A string `json:"a"`
		B int    `json:"b"`
	}
	var dst args
	if err := For(reflect.TypeFor[args]()).Decode(json.RawMessage(`{"a":"set","b":"x"}`), &dst); err == nil {
		t.Fatal("no error")
	}
	if dst != (args{}) {
		t.Fatalf("dst = %+v after a failed decode", dst)
	}
}
