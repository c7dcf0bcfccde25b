package resultkey

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolmw/toolmw"
)

func key(t *testing.T, tool string, shared bool, part, args string) Key {
	t.Helper()
	k, ok := Make(tool, shared, part, json.RawMessage(args))
	if !ok {
		t.Fatalf("Make(%q, %v, %q, %.40q): no key", tool, shared, part, args)
	}
	return k
}

// TestGolden pins the rule: replicas of different versions share entries
// only while it holds. A change here orphans every entry kept (give the
// rule a new Version). The keys were computed apart from this code, in
// Python: sha256(Version + len(tool) as 8 bytes little-endian + tool +
// "s", or "p" + len(part) + part, + the canonical arguments).
func TestGolden(t *testing.T) {
	for _, c := range []struct {
		tool   string
		shared bool
		part   string
		args   string
		want   string
	}{
		{"search_flights", true, "", `{"to":"LHR","from":"OSL"}`, "0545627c0bd934d3d9619a2e72beba698727ba516f0cd874aceee12e2b60806c"},
		{"get_balance", false, "tenant-1", `{"account":"a1"}`, "753f3d3f48f4ed20b723aa8208793eb3a805e772fbad82c492d88ffa1f4885f1"},
	} {
		got := key(t, c.tool, c.shared, c.part, c.args).String()
		if len(got) != 64 || strings.Trim(got, "0123456789abcdef") != "" {
			t.Errorf("%s: key %q, want 64 hex digits", c.tool, got)
		}
		if got != c.want {
			t.Errorf("%s: key %s, want %s", c.tool, got, c.want)
		}
	}
}

// TestSameValueSameKey: the same JSON value, however spaced or ordered,
// has one key; absent arguments are null.
func TestSameValueSameKey(t *testing.T) {
	a := key(t, "t", true, "", `{"a":1,"b":[1,2,{"c":"d"}]}`)
	b := key(t, "t", true, "", " {\"b\" : [1, 2, {\"c\":\"d\"}],\n\"a\":1} ")
	if a != b {
		t.Error("the same value spaced and ordered otherwise: different keys")
	}
	if key(t, "t", true, "", "") != key(t, "t", true, "", "null") {
		t.Error("absent arguments and null: different keys")
	}
}

// TestApart: a different tool, partition, sharing or value has a
// different key, however the parts could run into each other.
func TestApart(t *testing.T) {
	keys := map[Key]string{}
	for _, c := range []struct {
		name, tool string
		shared     bool
		part, args string
	}{
		{"base", "t", false, "p", `{}`},
		{"tool", "u", false, "p", `{}`},
		{"partition", "t", false, "q", `{}`},
		{"shared", "t", true, "", `{}`},
		{"shared named like a partition", "t", true, "p", `{}`},
		{"args", "t", false, "p", `{"a":1}`},
		{"number as written", "t", false, "p", `{"a":1.0}`},
		{"tool into partition", "tp", false, "", `{}`},
		{"partition into tool", "", false, "tp", `{}`},
		{"case", "t", false, "P", `{}`},
	} {
		k := key(t, c.tool, c.shared, c.part, c.args)
		if c.name == "shared named like a partition" {
			if k != key(t, "t", true, "", `{}`) {
				t.Error("shared results: the partition given counts")
			}
			continue
		}
		if other, ok := keys[k]; ok {
			t.Errorf("%s and %s: one key", c.name, other)
		}
		keys[k] = c.name
	}
}

// TestNoKey: arguments with no canonical form, or over MaxArgs, have no
// key; nor has a call whose partition is "" or whose partition function
// panics.
func TestNoKey(t *testing.T) {
	for _, args := range []string{`{"a":1,"a":2}`, `{"To":1,"to":2}`, `"\ud800"`, `{`, `1 2`, "\"\xff\"",
		strings.Repeat("[", 100) + strings.Repeat("]", 100), `"` + strings.Repeat("x", MaxArgs) + `"`} {
		if _, ok := Make("t", true, "", json.RawMessage(args)); ok {
			t.Errorf("%.40q: a key", args)
		}
	}
	if _, ok := Make("t", true, "", json.RawMessage(`"`+strings.Repeat("x", MaxArgs-2)+`"`)); !ok {
		t.Error("arguments of MaxArgs bytes: no key")
	}
	ctx := context.Background()
	call := toolmw.Call{Tool: "t"}
	for name, part := range map[string]func(context.Context, toolmw.Call) string{
		"empty":  func(context.Context, toolmw.Call) string { return "" },
		"panics": func(context.Context, toolmw.Call) string { panic("no tenant") },
	} {
		if _, ok := (Rule{Partition: part}).Of(ctx, call, json.RawMessage(`{}`)); ok {
			t.Errorf("partition %s: a key", name)
		}
	}
	r := Rule{Partition: func(context.Context, toolmw.Call) string { return "p" }}
	if k, ok := r.Of(ctx, call, json.RawMessage(`{}`)); !ok || k != key(t, "t", false, "p", `{}`) {
		t.Error("Rule.Of with a partition: not Make's key")
	}
	if k, ok := (Rule{}).Of(ctx, call, nil); !ok || k != key(t, "t", true, "", `null`) {
		t.Error("the zero Rule: not the shared key")
	}
}

func BenchmarkMake(b *testing.B) {
	args := json.RawMessage(`{"from":"OSL","to":"LHR","date":"2026-12-01","passengers":2}`)
	b.ReportAllocs()
	for b.Loop() {
		Make("search_flights", true, "", args)
	}
}
