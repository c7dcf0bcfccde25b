package toolmw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/schema"
	"github.com/toolmw/toolmw/taxonomy"
)

type line struct {
	SKU string `json:"sku"`
	Qty uint8  `json:"qty"`
}

type order struct {
	Customer string            `json:"customer"`
	Items    []line            `json:"items"`
	Express  bool              `json:"express,omitempty"`
	Note     *string           `json:"note"`
	Tags     map[string]int    `json:"tags,omitempty"`
	At       time.Time         `json:"at,omitzero"`
	Addr     netip.Addr        `json:"addr,omitzero"`
	Slots    [2]int            `json:"slots,omitzero"`
	Extra    json.RawMessage   `json:"extra,omitempty"`
	Any      any               `json:"any,omitempty"`
	ByID     map[int]string    `json:"by_id,omitempty"`
	Blob     []byte            `json:"blob,omitempty"`
	Weight   float32           `json:"weight,omitempty"`
	Ignored  func()            `json:"-"`
	Meta     map[string]string `json:"meta,omitempty"`
	embedded
}

type embedded struct {
	Channel string `json:"channel,omitempty"`
}

// planted is an input value that must never appear in an error.
const planted = "PLANTED-ghp_0123456789abcdefghijklmnopqrstuvwxyz"

func placeOrder() toolmw.Tool {
	return toolmw.Typed(func(ctx context.Context, o order) (string, error) {
		return "placed " + o.Customer, nil
	})
}

func TestTypedValid(t *testing.T) {
	res, err := placeOrder()(context.Background(), json.RawMessage(`{
		"customer":"c1","items":[{"sku":"A","qty":2}],"note":null,"tags":{"x":1},
		"at":"2026-01-02T03:04:05Z","addr":"10.0.0.1","slots":[1,2],"extra":{"k":[1]},
		"any":[1,"a"],"by_id":{"7":"x"},"blob":"aGk=","weight":1.5,"channel":"web"}`))
	if err != nil {
		t.Fatalf("valid input rejected: %v", err)
	}
	if res.Content != "placed c1" || res.JSON {
		t.Fatalf("res = %+v", res)
	}
}

func TestTypedInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []taxonomy.FieldError
	}{
		{"not json", `{"customer": "` + planted + `",`, []taxonomy.FieldError{{Type: "json_invalid", Loc: []any{}, Msg: "Input is not valid JSON"}}},
		{"garbage", planted, []taxonomy.FieldError{{Type: "json_invalid", Loc: []any{}, Msg: "Input is not valid JSON"}}},
		{"trailing data", `{"customer":"c","items":[]} {"x":"` + planted + `"}`, []taxonomy.FieldError{{Type: "trailing_data", Loc: []any{}, Msg: "Input has data after the JSON value"}}},
		{"not an object", `"` + planted + `"`, []taxonomy.FieldError{{Type: "object_type", Loc: []any{}, Msg: "Input should be a valid object"}}},
		{"unknown field", `{"customer":"c","items":[],"coupon":"` + planted + `"}`, []taxonomy.FieldError{{Type: "extra_forbidden", Loc: []any{"*"}, Msg: "Extra inputs are not permitted"}}},
		{"unknown key is input", `{"customer":"c","items":[],"` + planted + `":1}`, []taxonomy.FieldError{{Type: "extra_forbidden", Loc: []any{"*"}, Msg: "Extra inputs are not permitted"}}},
		{"case differs", `{"Customer":"c","items":[]}`, []taxonomy.FieldError{
			{Type: "extra_forbidden", Loc: []any{"*"}, Msg: "Extra inputs are not permitted"},
			{Type: "missing", Loc: []any{"customer"}, Msg: "Field required"}}},
		{"missing required", `{"items":[{"sku":"A"}]}`, []taxonomy.FieldError{
			{Type: "missing", Loc: []any{"items", 0, "qty"}, Msg: "Field required"},
			{Type: "missing", Loc: []any{"customer"}, Msg: "Field required"}}},
		{"duplicate key", `{"customer":"c","items":[],"customer":"` + planted + `"}`, []taxonomy.FieldError{
			{Type: "duplicate_key", Loc: []any{"customer"}, Msg: "Keys should be unique within an object"}}},
		{"duplicate key escaped", `{"customer":"c","items":[],"\u0063ustomer":"d"}`, []taxonomy.FieldError{
			{Type: "duplicate_key", Loc: []any{"customer"}, Msg: "Keys should be unique within an object"}}},
		{"duplicate map key", `{"customer":"c","items":[],"tags":{"` + planted + `":1,"` + planted + `":2}}`, []taxonomy.FieldError{
			{Type: "duplicate_key", Loc: []any{"tags", "*"}, Msg: "Keys should be unique within an object"}}},
		{"invalid UTF-8", "{\"customer\":\"\xff" + planted + "\",\"items\":[]}", []taxonomy.FieldError{
			{Type: "string_unicode", Loc: []any{"customer"}, Msg: "Input should be valid UTF-8 without lone surrogates"}}},
		{"lone surrogate", `{"customer":"\ud800","items":[]}`, []taxonomy.FieldError{
			{Type: "string_unicode", Loc: []any{"customer"}, Msg: "Input should be valid UTF-8 without lone surrogates"}}},
		{"invalid UTF-8 in a raw field", "{\"customer\":\"c\",\"items\":[],\"extra\":[\"\xff\"]}", []taxonomy.FieldError{
			{Type: "string_unicode", Loc: []any{"extra", 0}, Msg: "Input should be valid UTF-8 without lone surrogates"}}},
		{"null root", `null`, []taxonomy.FieldError{{Type: "object_type", Loc: []any{}, Msg: "Input should be a valid object, not null"}}},
		{"number bounds", `{"customer":"c","items":[],"any":1e400}`, []taxonomy.FieldError{
			{Type: "number_bounds", Loc: []any{"any"}, Msg: "Input should be a number of at most 64 characters, with at most 3 exponent digits, within ±1.7976931348623157e+308"}}},
		{"wrong type nested", `{"customer":"c","items":[{"sku":"A","qty":1},{"sku":"B","qty":1},{"sku":"C","qty":"` + planted + `"}]}`, []taxonomy.FieldError{
			{Type: "uint_type", Loc: []any{"items", 2, "qty"}, Msg: "Input should be a valid non-negative integer"}}},
		{"overflow", `{"customer":"c","items":[{"sku":"A","qty":300}]}`, []taxonomy.FieldError{
			{Type: "uint_overflow", Loc: []any{"items", 0, "qty"}, Msg: "Input should be within the range of uint8"}}},
		{"fraction for int", `{"customer":"c","items":[{"sku":"A","qty":1.5}]}`, []taxonomy.FieldError{
			{Type: "uint_type", Loc: []any{"items", 0, "qty"}, Msg: "Input should be a valid non-negative integer"}}},
		{"negative for uint", `{"customer":"c","items":[{"sku":"A","qty":-1}]}`, []taxonomy.FieldError{
			{Type: "uint_type", Loc: []any{"items", 0, "qty"}, Msg: "Input should be a valid non-negative integer"}}},
		{"null for string", `{"customer":null,"items":[]}`, []taxonomy.FieldError{
			{Type: "string_type", Loc: []any{"customer"}, Msg: "Input should be a valid string, not null"}}},
		{"number for string", `{"customer":12345678,"items":[]}`, []taxonomy.FieldError{
			{Type: "string_type", Loc: []any{"customer"}, Msg: "Input should be a valid string"}}},
		{"bool type", `{"customer":"c","items":[],"express":"` + planted + `"}`, []taxonomy.FieldError{
			{Type: "bool_type", Loc: []any{"express"}, Msg: "Input should be a valid boolean"}}},
		{"array type", `{"customer":"c","items":{"sku":"A"}}`, []taxonomy.FieldError{
			{Type: "array_type", Loc: []any{"items"}, Msg: "Input should be a valid array"}}},
		{"array length", `{"customer":"c","items":[],"slots":[1]}`, []taxonomy.FieldError{
			{Type: "array_length", Loc: []any{"slots"}, Msg: "Input should have exactly 2 items"}}},
		{"map value type", `{"customer":"c","items":[],"tags":{"vip":"` + planted + `"}}`, []taxonomy.FieldError{
			{Type: "int_type", Loc: []any{"tags", "*"}, Msg: "Input should be a valid integer"}}},
		{"map int key", `{"customer":"c","items":[],"by_id":{"seven":"x"}}`, []taxonomy.FieldError{
			{Type: "int_type", Loc: []any{"by_id", "*"}, Msg: "Key should be a valid integer in canonical decimal form"}}},
		{"time", `{"customer":"c","items":[],"at":"` + planted + `"}`, []taxonomy.FieldError{
			{Type: "datetime_type", Loc: []any{"at"}, Msg: "Input should be an RFC 3339 date-time string such as 2006-01-02T15:04:05Z"}}},
		{"text unmarshaler", `{"customer":"c","items":[],"addr":"` + planted + `"}`, []taxonomy.FieldError{
			{Type: "value_error", Loc: []any{"addr"}, Msg: "Input is not a valid netip.Addr"}}},
		{"text unmarshaler wants string", `{"customer":"c","items":[],"addr":5}`, []taxonomy.FieldError{
			{Type: "string_type", Loc: []any{"addr"}, Msg: "Input should be a valid string"}}},
		{"bytes", `{"customer":"c","items":[],"blob":"` + planted + `"}`, []taxonomy.FieldError{
			{Type: "bytes_type", Loc: []any{"blob"}, Msg: "Input should be a base64-encoded string"}}},
		{"float overflow", `{"customer":"c","items":[],"weight":1e300}`, []taxonomy.FieldError{
			{Type: "float_overflow", Loc: []any{"weight"}, Msg: "Input should be a finite number within the range of float32"}}},
		{"embedded field type", `{"customer":"c","items":[],"channel":7}`, []taxonomy.FieldError{
			{Type: "string_type", Loc: []any{"channel"}, Msg: "Input should be a valid string"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := placeOrder()(context.Background(), json.RawMessage(tc.in))
			te, isTyped := taxonomy.From(err)
			if !isTyped || te.Kind() != taxonomy.KindArgsInvalid || te.Code() != taxonomy.CodeArgsInvalid {
				t.Fatalf("err = %v, want tool-args-invalid", err)
			}
			info := taxonomy.InfoOf(err)
			if !reflect.DeepEqual(info.Fields, tc.want) {
				got, _ := json.Marshal(info.Fields)
				want, _ := json.Marshal(tc.want)
				t.Fatalf("fields\n got %s\nwant %s", got, want)
			}
			js, _ := json.Marshal(info)
			for _, text := range []string{err.Error(), string(js), toolmw.ForModel(toolmw.Result{}, err)} {
				if strings.Contains(text, "PLANTED") || strings.Contains(text, "12345678") {
					t.Fatalf("an input value leaked: %s", text)
				}
			}
		})
	}
}

func TestTypedFieldErrorCap(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"customer":"c","items":[`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"sku":1,"qty":"x"}`)
	}
	b.WriteString("]}")
	_, err := placeOrder()(context.Background(), json.RawMessage(b.String()))
	if n := len(taxonomy.InfoOf(err).Fields); n != 20 {
		t.Fatalf("%d field errors, want the cap of 20", n)
	}
}

// Pointer fields of one type, and types that refer to themselves through a
// pointer, are checked like any other field.
func TestTypedPointers(t *testing.T) {
	type stop struct {
		City string `json:"city"`
		Next *stop  `json:"next"`
	}
	type trip struct {
		Adults   *int  `json:"adults"`
		Children *int  `json:"children"`
		Route    *stop `json:"route"`
	}
	tool := toolmw.Typed(func(ctx context.Context, in trip) (string, error) { return "ok", nil })
	if _, err := tool(context.Background(), json.RawMessage(`{"adults":2,"children":null,"route":{"city":"Lisbon","next":{"city":"Porto","next":null}}}`)); err != nil {
		t.Fatalf("valid input rejected: %v", err)
	}
	_, err := tool(context.Background(), json.RawMessage(`{"adults":null,"children":"two","route":{"city":"Lisbon","next":{"city":3}}}`))
	want := []taxonomy.FieldError{
		{Type: "int_type", Loc: []any{"children"}, Msg: "Input should be a valid integer"},
		{Type: "string_type", Loc: []any{"route", "next", "city"}, Msg: "Input should be a valid string"},
	}
	if got := taxonomy.InfoOf(err).Fields; !reflect.DeepEqual(got, want) {
		t.Fatalf("fields\n got %+v\nwant %+v", got, want)
	}
}

func TestTypedEmptyArgs(t *testing.T) {
	type none struct{}
	tool := toolmw.Typed(func(ctx context.Context, _ none) (toolmw.Result, error) { return toolmw.Text("ran"), nil })
	for _, in := range []string{"", "  ", "{}"} {
		if res, err := tool(context.Background(), json.RawMessage(in)); err != nil || res.Content != "ran" {
			t.Fatalf("%q: %+v %v", in, res, err)
		}
	}
}

func TestTypedOutputs(t *testing.T) {
	raw := toolmw.Typed(func(ctx context.Context, _ struct{}) (json.RawMessage, error) { return json.RawMessage(`{"a":1}`), nil })
	if res, err := raw(context.Background(), nil); err != nil || !res.JSON || res.Content != `{"a":1}` {
		t.Fatalf("raw: %+v %v", res, err)
	}
	bad := toolmw.Typed(func(ctx context.Context, _ struct{}) (json.RawMessage, error) { return json.RawMessage(`{`), nil })
	if _, err := bad(context.Background(), nil); !strings.Contains(err.Error(), taxonomy.CodeResultNotJSON) {
		t.Fatalf("bad raw: %v", err)
	}
	failing := toolmw.Typed(func(ctx context.Context, _ struct{}) (int, error) { return 0, taxonomy.Refusal("no", "no") })
	if _, err := failing(context.Background(), nil); taxonomy.OutcomeOf(err) != taxonomy.OutcomeRefused {
		t.Fatalf("tool error not passed through: %v", err)
	}
}

func FuzzTyped(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"customer":"c","items":[{"sku":"A","qty":2}]}`, `[`, `null`, `{"items":[{"qty":1e400}]}`,
		`{"tags":{"":1}}`, `{"at":"2026-01-02T03:04:05Z"}`, `{"by_id":{"-1":"x"}}`, `{"slots":[1,2,3]}`,
		`{"customer":"` + planted + `"}`, `{"a":{"b":{"c":[[[[1]]]]}}}`, "{\"customer\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	tool := placeOrder()
	f.Fuzz(func(t *testing.T, in []byte) {
		_, err := tool(context.Background(), json.RawMessage(in))
		if err == nil {
			return
		}
		te, ok := taxonomy.From(err)
		if !ok || te.Kind() != taxonomy.KindArgsInvalid {
			t.Fatalf("err = %v", err)
		}
		info := taxonomy.InfoOf(err)
		js, _ := json.Marshal(info)
		fixed := string(info.Kind) + info.Code + info.Message
		for _, fe := range info.Fields {
			// A message is one of the fixed sentences: it never echoes input.
			if strings.ContainsAny(fe.Msg, `"{}[]`) {
				t.Fatalf("msg %q echoes input", fe.Msg)
			}
			fixed += fe.Type + fe.Msg
		}
		// Neither the string values nor the keys of the input appear in the
		// errors, except the struct's own field names.
		var v any
		if json.Unmarshal(in, &v) == nil {
			for _, s := range append(stringValues(v), keysOf(v)...) {
				if len(s) >= 8 && strings.Contains(string(js), s) && !strings.Contains(fixed, s) && !strings.Contains(orderFields, s) {
					t.Fatalf("input %q leaked into %s", s, js)
				}
			}
		}
	})
}

func stringValues(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = append(out, stringValues(e)...)
		}
	case map[string]any:
		for _, e := range x {
			out = append(out, stringValues(e)...)
		}
	}
	return out
}

// orderFields are the JSON field names of order and its parts: they may
// appear in a loc.
const orderFields = "customer items sku qty express note tags at addr slots extra any by_id blob weight meta channel"

func keysOf(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = append(out, keysOf(e)...)
		}
	case map[string]any:
		for k, e := range x {
			out = append(out, k)
			out = append(out, keysOf(e)...)
		}
	}
	return out
}

// TestTypedCaseFoldedKeys: keys of one object that are equal under Unicode
// simple case folding (how encoding/json matches keys to struct fields:
// "To" and "to", "deſtination" and "destination") are ambiguous for any
// struct they reach, now or downstream: the tool that decodes a raw or
// generic member with encoding/json gets whichever came last. Typed
// rejects them as duplicate keys wherever they are, never naming the key
// or its value. (Issue 26, item 1.)
func TestTypedCaseFoldedKeys(t *testing.T) {
	type payment struct {
		Destination string          `json:"destination"`
		Route       json.RawMessage `json:"route,omitempty"`
		Meta        map[string]any  `json:"meta,omitempty"`
		Any         any             `json:"any,omitempty"`
		Tags        map[string]int  `json:"tags,omitempty"`
	}
	type both struct { // two fields whose names fold together
		Lower string `json:"to,omitempty"`
		Upper string `json:"TO,omitempty"`
	}
	ran := 0
	pay := toolmw.Typed(func(ctx context.Context, in payment) (string, error) { ran++; return "paid", nil })
	pick := toolmw.Typed(func(ctx context.Context, in both) (string, error) { ran++; return "picked", nil })
	dup := func(loc ...any) []taxonomy.FieldError {
		return []taxonomy.FieldError{{Type: "duplicate_key", Loc: loc, Msg: "Keys should be unique within an object"}}
	}
	for _, tc := range []struct {
		name string
		tool toolmw.Tool
		in   string
		want []taxonomy.FieldError
	}{
		{"raw member", pay, `{"destination":"alice","route":{"To":"` + planted + `","to":"alice"}}`, dup("route", "*")},
		{"raw member, long s", pay, `{"destination":"alice","route":{"deſtination":"` + planted + `","destination":"alice"}}`, dup("route", "*")},
		{"generic map", pay, `{"destination":"alice","meta":{"iban":"a","IBAN":"` + planted + `"}}`, dup("meta", "*")},
		{"any", pay, `{"destination":"alice","any":[{"k":1,"\u212a":2}]}`, dup("any", 0, "*")},
		{"typed map", pay, `{"destination":"alice","tags":{"vip":1,"VIP":2}}`, dup("tags", "*")},
		{"struct fields", pick, `{"to":"alice","TO":"` + planted + `"}`, dup("TO")},
		{"struct fields reversed", pick, `{"TO":"` + planted + `","to":"alice"}`, dup("to")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.tool(context.Background(), json.RawMessage(tc.in))
			if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindArgsInvalid || !reflect.DeepEqual(info.Fields, tc.want) {
				got, _ := json.Marshal(info.Fields)
				want, _ := json.Marshal(tc.want)
				t.Fatalf("err = %v\n got %s\nwant %s", err, got, want)
			}
			js, _ := json.Marshal(taxonomy.InfoOf(err))
			if strings.Contains(err.Error()+string(js), "PLANTED") || strings.Contains(string(js), "IBAN") {
				t.Fatalf("a key or value leaked: %s", js)
			}
		})
	}
	if ran != 0 {
		t.Fatalf("the tool ran %d times on ambiguous arguments", ran)
	}
	// Either field of the struct alone, and keys that merely look alike
	// (Cyrillic е is another letter to encoding/json as well), are fine.
	for _, ok := range []struct {
		tool toolmw.Tool
		in   string
	}{
		{pick, `{"to":"alice"}`}, {pick, `{"TO":"alice"}`},
		{pay, `{"destination":"alice","meta":{"dеstination":"x","destination":"y"},"tags":{"ss":1,"ß":2}}`},
	} {
		if _, err := ok.tool(context.Background(), json.RawMessage(ok.in)); err != nil {
			t.Errorf("%s: %v", ok.in, err)
		}
	}
}

// TestTypedUnsettableFieldsRefuseNull: a field that JSON cannot set — a
// func, a chan, a non-empty interface, a complex number, a map whose keys
// cannot be read from JSON, a ",string" field — is left out of the schema
// (so a validator rejects it as an additional property) and refused by the
// decoder as unsupported, null included: null used to pass for such a
// field, though the docs say it cannot be set. The schema validator and
// the decoder agree on every case.
func TestTypedUnsettableFieldsRefuseNull(t *testing.T) {
	type unsettable struct {
		A  int                `json:"a"`
		F  func()             `json:"f"`
		C  chan int           `json:"c"`
		I  fmt.Stringer       `json:"i"`
		X  complex128         `json:"x"`
		M  map[[2]int]string  `json:"m"`
		S  int                `json:"s,string"`
		PS *int               `json:"ps,string"`
		FS []func()           `json:"fs,omitempty"`
		AF [1]func()          `json:"af,omitzero"`
		MF map[string]func()  `json:"mf,omitempty"`
		PF *func()            `json:"pf,omitempty"`
		E  struct{ F func() } `json:"e,omitzero"`
	}
	tool := toolmw.Typed(func(ctx context.Context, in unsettable) (string, error) { return "ran", nil })
	doc := schema.For[unsettable]().MustRender(schema.Plain)
	v, err := schema.Compile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args string
		ok   bool
	}{
		{`{"a":1}`, true},
		{`{"a":1,"fs":[],"af":[null],"mf":{},"pf":null,"e":{}}`, false}, // [null] for [1]func(): null is not a func
		{`{"a":1,"fs":[],"mf":{},"pf":null,"e":{}}`, true},
		{`{"a":1,"fs":null,"mf":null}`, true},
		{`{"a":1,"f":null}`, false}, {`{"a":1,"c":null}`, false}, {`{"a":1,"i":null}`, false},
		{`{"a":1,"x":null}`, false}, {`{"a":1,"m":null}`, false}, {`{"a":1,"s":null}`, false},
		{`{"a":1,"ps":null}`, false}, {`{"a":1,"e":{"F":null}}`, false},
		{`{"a":1,"f":1}`, false}, {`{"a":1,"s":"1"}`, false}, {`{"a":1,"s":1}`, false}, {`{"a":1,"x":[1,2]}`, false},
		{`{"a":1,"fs":[null]}`, false}, {`{"a":1,"mf":{"k":null}}`, false}, {`{"a":1,"pf":1}`, false},
	} {
		_, derr := tool(context.Background(), json.RawMessage(tc.args))
		verr := v.Validate(json.RawMessage(tc.args), 0)
		if (derr == nil) != tc.ok || (verr == nil) != tc.ok {
			t.Errorf("%s: decoder %v, validator %v; want accepted %v", tc.args, derr, verr, tc.ok)
		}
		if derr != nil {
			for _, f := range taxonomy.InfoOf(derr).Fields {
				if f.Type != "unsupported" && f.Type != "array_length" {
					t.Errorf("%s: field error %+v, want unsupported", tc.args, f)
				}
			}
		}
	}
}

// TestDateTimeDecoderAndSchemaAgree: a time.Time field is published as
// "format": "date-time"; on every case of internal/jsonarg's RFC 3339
// table (the RFC, the JSON-Schema-Test-Suite's date-time cases, and what
// Go's time.Parse gets wrong), Typed's decoder, the schema validator as
// package schema runs it (santhosh-tekuri/jsonschema asserting formats),
// and that validator's own date-time check as a referee all say what the
// RFC says.
func TestDateTimeDecoderAndSchemaAgree(t *testing.T) {
	b, err := os.ReadFile("internal/jsonarg/testdata/date-time.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases []struct {
			Data  string `json:"data"`
			Valid bool   `json:"valid"`
			From  string `json:"from"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Cases) < 50 {
		t.Fatalf("the table: %v, %d cases", err, len(doc.Cases))
	}
	type in struct {
		At time.Time `json:"at"`
	}
	tool := toolmw.Typed(func(ctx context.Context, in in) (string, error) { return "ok", nil })
	v, err := schema.Compile(schema.For[in]().MustRender(schema.Plain))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("referee.json", map[string]any{"type": "string", "format": "date-time"}); err != nil {
		t.Fatal(err)
	}
	referee, err := c.Compile("referee.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range doc.Cases {
		args, _ := json.Marshal(map[string]string{"at": tc.Data})
		_, derr := tool(context.Background(), args)
		verr := v.Validate(args, 0)
		rerr := referee.Validate(tc.Data)
		if (derr == nil) != tc.Valid || (verr == nil) != tc.Valid || (rerr == nil) != tc.Valid {
			t.Errorf("%s: %q: decoder %v, schema %v, referee %v; want valid %v", tc.From, tc.Data, derr == nil, verr == nil, rerr == nil, tc.Valid)
		}
	}
}
