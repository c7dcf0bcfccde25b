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
		kind     Kind
	}
	got := map[string]want{}
	var order []string
	for _, f := range For(reflect.TypeFor[outer]()).Root().Fields {
		got[f.Name] = want{f.Required, f.Node.Kind}
		order = append(order, f.Name)
	}
	expect := map[string]want{
		"shared":   {true, Int},
		"Name":     {true, String},
		"ptr":      {false, Ptr},
		"empty":    {false, String},
		"zero":     {false, Custom},
		"quoted":   {false, Never}, // ",string" is not supported
		"callback": {false, Never},
		"deep":     {false, Int},
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
	if err := m.Decode([]byte(`{"name":"a","children":[{"name":"b","children":[{"name":"c"}]}]}`), &n, 0); err != nil {
		t.Fatal(err)
	}
	err := m.Decode([]byte(`{"name":"a","children":[{"children":[{"name":1}]}]}`), &n, 0)
	want := []taxonomy.FieldError{
		{Type: "string_type", Loc: []any{"children", 0, "children", 0, "name"}, Msg: "Input should be a valid string"},
		{Type: "missing", Loc: []any{"children", 0, "name"}, Msg: "Field required"},
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
	if err := m.Decode([]byte(`{"a":null,"b":null}`), &v, 0); err != nil {
		t.Fatalf("null for both pointers: %v", err)
	}
	err := m.Decode([]byte(`{"a":"x","b":"y"}`), &v, 0)
	want := []taxonomy.FieldError{
		{Type: "int_type", Loc: []any{"a"}, Msg: "Input should be a valid integer"},
		{Type: "int_type", Loc: []any{"b"}, Msg: "Input should be a valid integer"},
	}
	if got := taxonomy.InfoOf(err).Fields; !reflect.DeepEqual(got, want) {
		t.Fatalf("fields\n got %+v\nwant %+v", got, want)
	}
}

// Keys that are not the struct's own field names never appear in a loc.
func TestKeysNeverEchoed(t *testing.T) {
	type args struct {
		Tags map[string]int `json:"tags"`
	}
	err := For(reflect.TypeFor[args]()).Decode([]byte(`{"secret-key":1,"tags":{"other-secret":"x","ok":1,"ok":2}}`), &args{}, 0)
	want := []taxonomy.FieldError{
		{Type: "extra_forbidden", Loc: []any{Placeholder}, Msg: "Extra inputs are not permitted"},
		{Type: "int_type", Loc: []any{"tags", Placeholder}, Msg: "Input should be a valid integer"},
		{Type: "duplicate_key", Loc: []any{"tags", Placeholder}, Msg: "Keys should be unique within an object"},
	}
	if got := taxonomy.InfoOf(err).Fields; !reflect.DeepEqual(got, want) {
		t.Fatalf("fields\n got %+v\nwant %+v", got, want)
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
	err := For(reflect.TypeFor[map[string]int]()).Decode([]byte(b.String()), &m, 0)
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
	if err := For(reflect.TypeFor[args]()).Decode(json.RawMessage(`{"a":"set","b":"x"}`), &dst, 0); err == nil {
		t.Fatal("no error")
	}
	if dst != (args{}) {
		t.Fatalf("dst = %+v after a failed decode", dst)
	}
}

// Parse, what a schema validator reads arguments with, finds keys equal
// under case folding at any depth as duplicates, like Decode, so a tool
// with a hand-written schema is never handed {"to":"a","TO":"b"}, which
// encoding/json reads by key order; past the small-object path too.
// Look-alike keys that fold apart are kept.
func TestParseCaseFoldedKeys(t *testing.T) {
	var many strings.Builder
	for i := range 12 {
		many.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	for _, in := range []string{
		`{"to":"a","TO":"b"}`,
		`{"x":[{"deſtination":"m","destination":"a"}]}`,
		`{"k":1,"\u212a":2}`,
		`{` + many.String() + `"KXXX":2}`,
	} {
		_, err := Parse([]byte(in), 0)
		fields := taxonomy.InfoOf(err).Fields
		if len(fields) != 1 || fields[0].Type != "duplicate_key" {
			t.Errorf("Parse(%s) = %v, want one duplicate_key", in, err)
		}
	}
	for _, in := range []string{`{"to":"a","tö":"b"}`, `{"dеstination":1,"destination":2}`, `{"ss":1,"ß":2}`, `{"a":{"k":1},"b":{"k":1}}`} {
		if _, err := Parse([]byte(in), 0); err != nil {
			t.Errorf("Parse(%s) = %v, want no error", in, err)
		}
	}
}
