package guardrail_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf16"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/guardrail"
	"github.com/toolmw/toolmw/taxonomy"
)

// cardNumber is the package Example's pattern: four groups of four digits.
var cardNumber = regexp.MustCompile(`\b\d{4}[ -]?\d{4}[ -]?\d{4}[ -]?\d{4}\b`)

// TestArgsCheckSeesDecodedStrings: the package Example's check, a pattern
// over the arguments' JSON text, is not bypassed by JSON escapes, in any
// form (lower- or upper-case hex, a digit or a separator escaped, every
// character escaped, \/), in a key or a value, at any depth: an argument
// check sees the arguments with every string decoded. The tool still gets
// the arguments as they were sent.
func TestArgsCheckSeesDecodedStrings(t *testing.T) {
	noCards := func(_ context.Context, _ toolmw.Call, args json.RawMessage) error {
		if cardNumber.Match(args) {
			return errors.New("a card number in the arguments")
		}
		return nil
	}
	for _, args := range []string{
		`{"text":"card 4556 7375 8689 9855"}`,
		`{"text":"card \u0034556 7375 8689 9855"}`,
		`{"text":"card 4556\u00207375 8689 9855"}`,
		`{"text":"card 4556\u002D7375\u002d8689-9855"}`,
		`{"text":"card 4556 7375 8689 985\u0035"}`,
		`{"text":"card \u0034\u0035\u0035\u0036\u0020\u0037\u0033\u0037\u0035\u0020\u0038\u0036\u0038\u0039\u0020\u0039\u0038\u0035\u0035"}`,
		`{"text":"card 4556\u00A07375"}`, // a no-break space is not a separator of the pattern: not blocked (below)
		`{"a":[{"b":{"c":["x", "card 455\u0036 7375 8689 9855"]}}]}`,
		`{"card 455\u0036 7375 8689 9855":true}`,
		` { "text" : "card \u0034556 7375 8689 9855" } `,
	} {
		ct := &counted{}
		tool := wrap(t, ct.tool, guardrail.New(guardrail.Args("no_card_numbers", noCards)))
		res, err := tool(context.Background(), json.RawMessage(args))
		if args == `{"text":"card 4556\u00A07375"}` {
			if err != nil || res.Content != "echo "+args {
				t.Fatalf("%s: %q, %v; want it through, unchanged", args, res.Content, err)
			}
			continue
		}
		if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeGuardrailArgs || ct.n.Load() != 0 {
			t.Errorf("%s: not blocked (%v), %d executions", args, err, ct.n.Load())
		}
	}
}

// escapeAll writes s as a JSON string with every character \u escaped.
func escapeAll(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04X`, r1, r2)
			continue
		}
		fmt.Fprintf(&b, `\u%04X`, r)
	}
	b.WriteByte('"')
	return b.String()
}

// TestStringChecks: ArgStrings and ResultStrings see every string decoded,
// keys and values at any depth, numbers as written, a text result whole;
// separators JSON must escape (a tab, a newline) arrive as themselves.
func TestStringChecks(t *testing.T) {
	spaced := regexp.MustCompile(`\b\d{4}\s?\d{4}\s?\d{4}\s?\d{4}\b`)
	var mu sync.Mutex
	var seen []string
	noCards := func(_ context.Context, _ toolmw.Call, s string) error {
		mu.Lock()
		seen = append(seen, s)
		mu.Unlock()
		if spaced.MatchString(s) {
			return errors.New("a card number")
		}
		return nil
	}
	blocked := []string{
		`{"text":"card 4556\t7375\n8689\r9855"}`,
		`{"text":"card 4556\u00097375\u000A8689\u000d9855"}`,
		`{"a":{"b":[[{"c":` + escapeAll("card 4556 7375 8689 9855") + `}]]}}`,
		`{` + escapeAll("4556 7375 8689 9855") + `:1}`,
		`{"n":4556737586899855}`,
	}
	for _, args := range blocked {
		ct := &counted{}
		tool := wrap(t, ct.tool, guardrail.New(guardrail.ArgStrings("no_card_numbers", noCards)))
		if _, err := tool(context.Background(), json.RawMessage(args)); taxonomy.InfoOf(err).Code != taxonomy.CodeGuardrailArgs || ct.n.Load() != 0 {
			t.Errorf("%s: not blocked (%v), %d executions", args, err, ct.n.Load())
		}
	}

	seen = nil
	tool := wrap(t, (&counted{}).tool, guardrail.New(guardrail.ArgStrings("no_card_numbers", noCards)))
	if _, err := tool(context.Background(), json.RawMessage(`{"k\u00e9y":["v\/1",2.5e3,true,null,{"\ud83d\ude00":"\u0022"}]}`)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"kéy", "v/1", "2.5e3", "😀", `"`}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("the check saw %q, want %q", seen, want)
	}

	for _, c := range []struct {
		res  toolmw.Result
		want []string
	}{
		{toolmw.Result{Content: `{"card":"\u0034556 7375 8689 9855"}`, JSON: true}, []string{"card", "4556 7375 8689 9855"}},
		{toolmw.Result{Content: `card \u0034556`}, []string{`card \u0034556`}},
		{toolmw.Result{Content: `{"not json`, JSON: true}, []string{`{"not json`}},
	} {
		seen = nil
		tool := wrap(t, func(context.Context, json.RawMessage) (toolmw.Result, error) { return c.res, nil },
			guardrail.New(guardrail.ResultStrings("no_card_numbers", noCards)))
		_, err := tool(context.Background(), nil)
		if !reflect.DeepEqual(seen, c.want) {
			t.Errorf("%q: the check saw %q, want %q", c.res.Content, seen, c.want)
		}
		if blocks := cardNumber.MatchString(strings.Join(seen, " ")); blocks != (taxonomy.InfoOf(err).Code == taxonomy.CodeGuardrailResult) {
			t.Errorf("%q: %v", c.res.Content, err)
		}
	}
}

// TestResultCheckSeesDecodedJSON: a result check reads a JSON result with
// every string decoded, as an argument check reads the arguments; the
// result that enters the run is the tool's own.
func TestResultCheckSeesDecodedJSON(t *testing.T) {
	noCards := func(_ context.Context, _ toolmw.Call, res toolmw.Result) error {
		if cardNumber.MatchString(res.Content) {
			return errors.New("a card number in the result")
		}
		return nil
	}
	for _, c := range []struct {
		content string
		blocked bool
	}{
		{`{"card":"\u0034556 7375 8689 9855"}`, true},
		{`{"card":"4556\u00207375\u00208689\u00209855"}`, true},
		{`{"note":"caf\u00e9"}`, false},
	} {
		tool := wrap(t, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Result{Content: c.content, JSON: true}, nil
		}, guardrail.New(guardrail.Result("no_card_numbers", noCards)))
		res, err := tool(context.Background(), nil)
		if blocked := taxonomy.InfoOf(err).Code == taxonomy.CodeGuardrailResult; blocked != c.blocked {
			t.Errorf("%s: %v", c.content, err)
		}
		if !c.blocked && res.Content != c.content {
			t.Errorf("the result was changed: %q", res.Content)
		}
	}
}

// TestArgumentsTheLayerCannotRead: arguments over the spec's size cap are
// refused unread, as Wrap refuses them; arguments that are not JSON or nest
// deeper than MaxDepth end as tool-args-invalid: no check runs on content
// it cannot read, and the tool does not run. The work is one pass over at
// most the size cap, whatever the nesting.
func TestArgumentsTheLayerCannotRead(t *testing.T) {
	var checked atomic.Int64
	check := func(context.Context, toolmw.Call, json.RawMessage) error { checked.Add(1); return nil }
	deep := strings.Repeat("[", guardrail.MaxDepth+1) + strings.Repeat("]", guardrail.MaxDepth+1)
	for _, c := range []struct {
		args, code, typ string
		max             int
	}{
		{`{"a":1}` + strings.Repeat(" ", 100), taxonomy.CodeArgsTooLarge, "too_large", 64},
		{strings.Repeat(`[`, toolmw.DefaultMaxArgsBytes+1), taxonomy.CodeArgsTooLarge, "too_large", 0},
		{deep, taxonomy.CodeArgsInvalid, "too_deep", 0},
		{strings.Repeat(`[`, 100_000), taxonomy.CodeArgsInvalid, "too_deep", 1 << 20},
		{`{"a":"\u00"}`, taxonomy.CodeArgsInvalid, "json_invalid", 0},
		{`{"a":1} {"b":2}`, taxonomy.CodeArgsInvalid, "json_invalid", 0},
		{`{"a":1,}`, taxonomy.CodeArgsInvalid, "json_invalid", 0},
	} {
		checked.Store(0)
		ct := &counted{}
		tool, err := toolmw.Wrap(toolmw.Spec{Name: "book", MaxArgsBytes: c.max}, ct.tool, guardrail.New(guardrail.Args("any", check)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = tool(context.Background(), json.RawMessage(c.args))
		info := taxonomy.InfoOf(err)
		if info.Kind != taxonomy.KindArgsInvalid || info.Code != c.code || len(info.Fields) != 1 || info.Fields[0].Type != c.typ {
			t.Errorf("%.40s: %+v", c.args, info)
		}
		if checked.Load() != 0 || ct.n.Load() != 0 {
			t.Errorf("%.40s: %d checks, %d executions", c.args, checked.Load(), ct.n.Load())
		}
	}
	// Within the bounds, nesting is read: MaxDepth levels pass.
	ok := strings.Repeat("[", guardrail.MaxDepth) + strings.Repeat("]", guardrail.MaxDepth)
	if _, err := wrap(t, (&counted{}).tool, guardrail.New(guardrail.Args("any", check)))(context.Background(), json.RawMessage(ok)); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentDecodedChecks: 400 callers at once, every other one with a
// card number hidden by escapes: each escaped one is blocked, each clean one
// runs, and the tool gets its arguments as sent.
func TestConcurrentDecodedChecks(t *testing.T) {
	noCards := func(_ context.Context, _ toolmw.Call, args json.RawMessage) error {
		if cardNumber.Match(args) {
			return errors.New("a card number")
		}
		return nil
	}
	var mismatched atomic.Int64
	tool := wrap(t, func(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
		if !strings.Contains(string(args), `\u0020`) {
			mismatched.Add(1)
		}
		return toolmw.Text("ok"), nil
	}, guardrail.New(guardrail.Args("no_card_numbers", noCards)))
	var okN, blockedN atomic.Int64
	var wg sync.WaitGroup
	for i := range 400 {
		wg.Go(func() {
			args := `{"text":"seat\u00201A"}`
			if i%2 == 0 {
				args = `{"text":"card 4556\u00207375 8689 9855"}`
			}
			switch _, err := tool(context.Background(), json.RawMessage(args)); {
			case err == nil:
				okN.Add(1)
			case taxonomy.InfoOf(err).Code == taxonomy.CodeGuardrailArgs:
				blockedN.Add(1)
			default:
				t.Errorf("unexpected %v", err)
			}
		})
	}
	wg.Wait()
	if okN.Load() != 200 || blockedN.Load() != 200 || mismatched.Load() != 0 {
		t.Fatalf("ok %d, blocked %d, tool saw changed arguments %d times", okN.Load(), blockedN.Load(), mismatched.Load())
	}
}
