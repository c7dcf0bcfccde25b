package policyyaml_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolmw/toolmw/adapters/policyyaml"
	"github.com/toolmw/toolmw/policy"
	"github.com/toolmw/toolmw/taxonomy"
)

const yamlDoc = `# the fleet's policies
version: 1
defaults:
  layers: [retry, breaker, timeout]
  timeout: 5s
  retry:
    max_attempts: 2
  breaker:
    consecutive_failures: 3
    open_for: 1h
tools:
  search_flights:
    timeout: 2s
    retry: {max_attempts: 4, budget_ratio: 0.2}
  book_flight:
    layers:
      - runlimit
      - breaker
      - ratelimit
      - bulkhead
      - timeout
    max_calls_per_run: 1
    rate_limit: {per_second: 5, burst: 2, reject: true}
    bulkhead: {max_concurrent: 2, max_queue: 4}
`

const jsonDoc = `{"version": 1,
  "defaults": {"layers": ["retry", "breaker", "timeout"], "timeout": "5s",
    "retry": {"max_attempts": 2}, "breaker": {"consecutive_failures": 3, "open_for": "1h"}},
  "tools": {
    "search_flights": {"timeout": "2s", "retry": {"max_attempts": 4, "budget_ratio": 0.2}},
    "book_flight": {"layers": ["runlimit", "breaker", "ratelimit", "bulkhead", "timeout"], "max_calls_per_run": 1,
      "rate_limit": {"per_second": 5, "burst": 2, "reject": true}, "bulkhead": {"max_concurrent": 2, "max_queue": 4}}}}`

// TestSameAsJSON: the YAML document and its JSON twin give the same
// policies, read from files.
func TestSameAsJSON(t *testing.T) {
	dir := t.TempDir()
	yp, jp := filepath.Join(dir, "policy.yaml"), filepath.Join(dir, "policy.json")
	if err := os.WriteFile(yp, []byte(yamlDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jp, []byte(jsonDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	ys, err := policy.Load(yp, policy.WithDecoder(policyyaml.Decode))
	if err != nil {
		t.Fatal(err)
	}
	js, err := policy.Load(jp)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"search_flights", "book_flight", "not_in_the_file"} {
		if y, j := ys.Policy(tool), js.Policy(tool); !reflect.DeepEqual(y, j) {
			t.Errorf("%s: YAML %+v, JSON %+v", tool, y, j)
		}
	}
	if p := ys.Policy("book_flight"); !p.RateLimit.Reject || p.Bulkhead.MaxQueue != 4 {
		t.Errorf("book_flight: %+v", p)
	}
}

func TestInvalid(t *testing.T) {
	cases := []struct {
		name, doc string
		line      int
		field     string
		reason    string
	}{
		{"unknown field", "defaults:\n  timeout: 1s\n  retries: 3\n", 3, "defaults.retries", "unknown field"},
		{"bad duration", "tools:\n  a:\n    timeout: 5 seconds\n", 3, "tools.a.timeout", "not a duration"},
		{"negative limit", "tools:\n  a:\n    layers: [bulkhead]\n    bulkhead:\n      max_concurrent: -1\n", 5, "tools.a.bulkhead.max_concurrent", "below 1"},
		{"unknown layer", "defaults:\n  layers:\n    - retry\n    - retyr\n", 4, "defaults.layers[1]", "unknown layer"},
		{"key twice", "defaults:\n  timeout: 1s\n  timeout: 2s\n", 3, "timeout", "twice"},
		{"number as text", "defaults:\n  retry:\n    max_attempts: \"3\"\n", 3, "defaults.retry.max_attempts", "must be a number"},
		{"alias", "defaults: &d\n  timeout: 1s\ntools:\n  a: *d\n", 1, "", "anchors and aliases"},
		{"merge key", "base: {timeout: 1s}\ndefaults:\n  <<: {timeout: 1s}\n", 3, "", "merge keys"},
		{"two documents", "defaults: {}\n---\ntools: {}\n", 2, "", "more than one document"},
		{"syntax", "version: 1\ndefaults:\n  timeout: 1s\ntools: \"x\n", 4, "", "not valid YAML"},
		{"custom tag", "defaults:\n  timeout: !!binary aGVsbG8=\n", 2, "", "tag"},
		{"deep", "defaults: " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "\n", 1, "", "nest deeper"},
		{"empty", "", 1, "", "empty"},
		{"infinite", "defaults:\n  rate_limit: {per_second: .inf}\n", 2, "", "not a number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := policy.New("p.yaml", []byte(c.doc), policy.WithDecoder(policyyaml.Decode))
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *policy.Error", err)
			}
			if pe.File != "p.yaml" || pe.Line != c.line || pe.Field != c.field || !strings.Contains(pe.Reason, c.reason) {
				t.Errorf("got %s (line %d field %q); want line %d, field %q, reason with %q", err, pe.Line, pe.Field, c.line, c.field, c.reason)
			}
			if taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
				t.Errorf("%v: code %s, want option_invalid", err, taxonomy.InfoOf(err).Code)
			}
		})
	}
}

// TestBillionLaughs: a document that would expand without bound through
// aliases is refused at once.
func TestBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	prev := "a"
	for i := range 8 {
		name := string(rune('b' + i))
		b.WriteString(name + ": &" + name + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n")
		prev = name
	}
	_, err := policyyaml.Decode([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "aliases") {
		t.Fatalf("err = %v, want the aliases refused", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(yamlDoc))
	f.Add([]byte("a: &a [1]\nb: *a\n"))
	f.Add([]byte("defaults: {timeout: 1s, timeout: 2s}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := policyyaml.Decode(data)
		if err != nil {
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("an error not a *policy.Error: %v", err)
			}
			return
		}
		if err := policy.CheckBounds(n); err != nil {
			t.Fatalf("a tree out of bounds was returned: %v", err)
		}
	})
}
