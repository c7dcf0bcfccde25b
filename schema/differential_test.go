package schema

import (
	"flag"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/toolmw/toolmw/internal/jsonarg"
	"github.com/toolmw/toolmw/taxonomy"
)

var (
	diffDocs = flag.Int("diff.docs", 1200, "documents per corpus type in the differential test")
	diffSeed = flag.Uint64("diff.seed", 1, "seed of the differential test's generator")
)

// subject is one corpus type under the differential test: its decoder and
// the validators of its renderings.
type subject struct {
	name   string
	model  *jsonarg.Model
	typ    reflect.Type
	plain  *Validator
	strict *Validator // nil when the type has no strict rendering
}

func subjects(t testing.TB) []subject {
	var out []subject
	for _, c := range corpus {
		s := Of(c.typ)
		plain, err := Compile(s.MustRender(Plain))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sub := subject{name: c.name, model: jsonarg.For(c.typ), typ: c.typ, plain: plain}
		if strict, err := s.Render(OpenAIStrict); err == nil {
			if sub.strict, err = Compile(strict); err != nil {
				t.Fatalf("%s strict: %v", c.name, err)
			}
		}
		out = append(out, sub)
	}
	return out
}

// check runs doc through the decoder and the validators. The strict schema
// must say what the decoder says, except that it requires every property,
// which the decoder does not: omitted says whether doc leaves an optional
// field out (unknown: then the strict schema must only never accept what
// the decoder rejects).
func (s subject) check(t testing.TB, doc string, omitted *bool) {
	t.Helper()
	v := reflect.New(s.typ).Elem()
	typedErr := s.model.DecodeValue([]byte(doc), v, 0)
	if typedErr != nil && wideOverflow(s.model.Root(), typedErr) {
		// A 64-bit integer past its range: the schemas show no bounds
		// for it (docs/schema.md), the decoder rejects it.
		return
	}
	plainErr := s.plain.Validate([]byte(doc), 0)
	if (typedErr == nil) != (plainErr == nil) {
		t.Errorf("%s: decoder and plain schema disagree on %q\n decoder: %v\n schema:  %v", s.name, doc, typedErr, plainErr)
	}
	if s.strict != nil {
		strictErr := s.strict.Validate([]byte(doc), 0)
		switch {
		case omitted == nil:
			if strictErr == nil && typedErr != nil {
				t.Errorf("%s: the strict schema accepts what the decoder rejects: %q\n decoder: %v", s.name, doc, typedErr)
			}
		case (strictErr == nil) != (typedErr == nil && !*omitted):
			t.Errorf("%s: decoder (omitted optional: %v) and strict schema disagree on %q\n decoder: %v\n schema:  %v", s.name, *omitted, doc, typedErr, strictErr)
		}
	}
}

// wideOverflow reports whether every error of err is a 64-bit integer
// field out of its range.
func wideOverflow(root *jsonarg.Node, err error) bool {
	fields := taxonomy.InfoOf(err).Fields
	for _, f := range fields {
		if f.Type != "int_overflow" && f.Type != "uint_overflow" {
			return false
		}
		n := root
		for _, l := range f.Loc {
			for n != nil && n.Kind == jsonarg.Ptr {
				n = n.Elem
			}
			if n == nil {
				return false
			}
			switch n.Kind {
			case jsonarg.Struct:
				name, _ := l.(string)
				fl, ok := n.Field(name)
				if !ok {
					return false
				}
				n = fl.Node
			case jsonarg.Slice, jsonarg.Array, jsonarg.Map:
				n = n.Elem
			default:
				return false
			}
		}
		for n != nil && n.Kind == jsonarg.Ptr {
			n = n.Elem
		}
		if n == nil || (n.Kind != jsonarg.Int && n.Kind != jsonarg.Uint) || n.Type.Bits() != 64 {
			return false
		}
	}
	return len(fields) > 0
}

// TestDifferential generates documents for every corpus type, valid and
// invalid, and fails on every one the decoder and a schema validator judge
// differently: the plain rendering exactly; the OpenAI-strict rendering
// exactly on documents that send every property (it requires them all).
func TestDifferential(t *testing.T) {
	docs := *diffDocs
	if testing.Short() {
		docs = 300
	}
	for _, s := range subjects(t) {
		t.Run(s.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(*diffSeed, uint64(len(s.name))))
			accepted := map[bool]int{}
			for i := range docs {
				g := gen{r: r, mut: []float64{0, 0.02, 0.1, 0.3}[i%4], strict: i%2 == 1}
				doc := g.doc(s.model.Root())
				s.check(t, doc, &g.omitted)
				accepted[s.model.DecodeValue([]byte(doc), reflect.New(s.typ).Elem(), 0) == nil]++
				if t.Failed() {
					return
				}
			}
			if accepted[true] == 0 || accepted[false] == 0 {
				t.Errorf("%s: %d accepted, %d rejected: the generator must exercise both", s.name, accepted[true], accepted[false])
			}
			t.Logf("%d documents: %d accepted, %d rejected", docs, accepted[true], accepted[false])
		})
	}
}

// FuzzDifferential extends the differential test beyond the generator's
// choices: any input, against every corpus type.
func FuzzDifferential(f *testing.F) {
	r := rand.New(rand.NewPCG(7, 7))
	subs := subjects(f)
	for _, s := range subs {
		for i := range 4 {
			g := gen{r: r, mut: 0.1, strict: i%2 == 0}
			f.Add(g.doc(s.model.Root()))
		}
	}
	f.Fuzz(func(t *testing.T, doc string) {
		for _, s := range subs {
			s.check(t, doc, nil)
		}
	})
}
