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
		"ptr":      {false, kPtr},
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

// A type that refers to itself through a pointer is checked all the way
// down (its fields were once missing below the first level).
func TestRecursiveType(t *testing.T) {
	type node struct {
		Name     string  `json:"name"`
		Children []*node `json:"children,omitempty"`
	}
	m := For(reflect.TypeFor[node]())
	var n node
	if err := m.Decode([]byte(`{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]}`), &n); err != nil {
		t.Fatal(err)
	}
	err := m.Decode([]byte(`{"name":"a","children":[{"children":[{"name":1}]}]}`), &n)
	want := []taxonomy.FieldError{
		{Type: "missing", Loc: []any{"children", 0, "name"}, Msg: "Field required"},
		{Type: "string_type", Loc: []any{"children", 0, "children", 0, "name"}, Msg: "Input should be a valid string"},
	}
	if got := taxonomy.InfoOf(err).Fields; !reflect.DeepEqual(got, want) {
		t.Fatalf("fields\n got %+v\nwant %+v", got, want)
	}
}

// Two fields of one pointer type share its schema: both accept null and
// check their values (the second once got an empty schema).
func TestRepeatedPointerType(t *testing.T) {
	type two struct {
		A *int `json:"a"`
		B *int `json:"b"`
	}
	m := For(reflect.TypeFor[two]())
	var v two
	if err := m.Decode([]byte(`{"a":null,"b":null}`), &v); err != nil {
		t.Fatalf("null for both pointers: %v", err)
	}
	err := m.Decode([]byte(`{"a":"x","b":"y"}`), &v)
	want := []taxonomy.FieldError{
		{Type: "int_type", Loc: []any{"a"}, Msg: "Input should be a valid integer"},
		{Type: "int_type", Loc: []any{"b"}, Msg: "Input should be a valid integer"},
	}
	if got := taxonomy.InfoOf(err).Fields; !reflect.DeepEqual(got, want) {
		t.Fatalf("fields\n got %+v\nwant %+v", got, want)
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
