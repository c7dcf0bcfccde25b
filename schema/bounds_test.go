package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw/taxonomy"
)

// bombSchema is the schema of issue 27: levels of
// anyOf [{$ref: next}, {$ref: next}], 1.2 KB at 18 levels; each value is
// checked against 2^levels schemas.
func bombSchema(levels int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","$ref":"#/$defs/d0","$defs":{`)
	for i := range levels {
		fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, levels)
	return json.RawMessage(b.String())
}

// nestedSchema nests objects levels deep through properties: each level
// adds two to the document's depth.
func nestedSchema(levels int) json.RawMessage {
	s := `{"type":"object"}`
	for range levels {
		s = `{"type":"object","properties":{"a":` + s + `}}`
	}
	return json.RawMessage(s)
}

// notChain is an object schema of depth exactly depth: a property whose
// schema is depth-2 schemas nested through "not".
func notChain(depth int) json.RawMessage {
	s := `{}`
	for range depth - 3 {
		s = `{"not":` + s + `}`
	}
	return json.RawMessage(`{"type":"object","properties":{"a":` + s + `}}`)
}

// wideSchema has n properties: n+2 objects.
func wideSchema(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{}`, i)
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

// fanSchema is an object schema whose root is an anyOf of refs
// alternatives that refer to one leaf and extra inline ones: one value is
// checked against 1 + 2·refs + extra schemas at the root (the root, each
// reference and its leaf, each inline alternative).
func fanSchema(refs, extra int) json.RawMessage {
	var alts []string
	for range refs {
		alts = append(alts, `{"$ref":"#/$defs/leaf"}`)
	}
	for range extra {
		alts = append(alts, `{}`)
	}
	return json.RawMessage(`{"type":"object","$defs":{"leaf":{"type":"object"}},"anyOf":[` + strings.Join(alts, ",") + `]}`)
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := taxonomy.InfoOf(err).Code; got != code {
		t.Fatalf("got %s (%v), want %s", got, err, code)
	}
}

// The bomb of issue 27 is refused when it is compiled (through Wrap, and
// NewRemote, which both compile it), and by every profile's Check: one
// value would be checked against 2^18 schemas.
func TestSchemaBombRefused(t *testing.T) {
	doc := bombSchema(18)
	if len(doc) > 1300 {
		t.Fatalf("the bomb is %d bytes", len(doc))
	}
	_, err := Compile(doc)
	wantCode(t, err, taxonomy.CodeSchemaTooCostly)
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindDefinitionInvalid {
		t.Fatalf("kind %s", info.Kind)
	}
	for _, p := range Profiles() {
		wantCode(t, Check(doc, p), taxonomy.CodeSchemaTooCostly)
	}
	// A few levels are fine: 6 levels apply 253 schemas at one place.
	if _, err := Compile(bombSchema(6)); err != nil {
		t.Fatal(err)
	}
}

// A schema nested 900 levels deep, which compiled in seconds (the time
// grows with the square of the depth), is refused before it is compiled.
func TestDeepSchemaRefusedBeforeCompiling(t *testing.T) {
	_, err := Compile(nestedSchema(900))
	wantCode(t, err, taxonomy.CodeSchemaTooCostly)
	if !strings.Contains(err.Error(), "levels deep") {
		t.Fatalf("%v", err)
	}
}

// Each bound on a schema document holds exactly at its edge: the document
// at the bound compiles, one past it is schema_too_costly.
func TestSchemaBoundsAtTheirEdges(t *testing.T) {
	pad := func(doc json.RawMessage, n int) json.RawMessage {
		// a description that brings the document to n bytes
		d := `{"type":"object","description":"","properties":` + string(doc) + `}`
		return json.RawMessage(strings.Replace(d, `""`, `"`+strings.Repeat("x", n-len(d))+`"`, 1))
	}
	pattern := func(n int) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"` + strings.Repeat("a", n) + `"}}}`)
	}
	patternProps := func(n int) json.RawMessage {
		return json.RawMessage(`{"type":"object","patternProperties":{"` + strings.Repeat("a", n) + `":{}}}`)
	}
	number := func(lit string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","maximum":` + lit + `}}}`)
	}
	for _, c := range []struct {
		name     string
		at, past json.RawMessage
	}{
		{"bytes", pad(json.RawMessage(`{}`), MaxSchemaBytes), pad(json.RawMessage(`{}`), MaxSchemaBytes+1)},
		{"depth", notChain(MaxSchemaDepth), notChain(MaxSchemaDepth + 1)},
		{"nodes", wideSchema(MaxSchemaNodes - 2), wideSchema(MaxSchemaNodes - 1)},
		{"patterns", pattern(MaxPatternBytes), pattern(MaxPatternBytes + 1)},
		{"pattern names", patternProps(MaxPatternBytes), patternProps(MaxPatternBytes + 1)},
		{"number length", number("1" + strings.Repeat("0", MaxSchemaNumberLen-1)), number("1" + strings.Repeat("0", MaxSchemaNumberLen))},
		{"exponent digits", number("1e308"), number("1e0308")},
		{"expansion", fanSchema((MaxExpansion-2)/2, 1), fanSchema((MaxExpansion-2)/2, 2)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Compile(c.at); err != nil {
				t.Fatalf("at the bound: %v", err)
			}
			_, err := Compile(c.past)
			wantCode(t, err, taxonomy.CodeSchemaTooCostly)
		})
	}
}

// A cycle of references that never steps into the arguments is refused:
// it has no end.
func TestSchemaSameplaceCycleRefused(t *testing.T) {
	doc := json.RawMessage(`{"type":"object","$defs":{"a":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/b"}]},"b":{"allOf":[{"$ref":"#/$defs/a"}]}},"$ref":"#/$defs/a"}`)
	_, err := Compile(doc)
	wantCode(t, err, taxonomy.CodeSchemaTooCostly)
	// Recursion through the arguments is fine.
	if _, err := Compile(json.RawMessage(`{"type":"object","properties":{"next":{"$ref":"#"}}}`)); err != nil {
		t.Fatal(err)
	}
}

// deepBranching passes every static bound, but each level of the
// arguments doubles the work: a two-way anyOf whose alternatives both
// recurse into "a". Arguments nested n deep ending in a value neither
// accepts are checked against 2^n schemas.
const deepBranching = `{"type":"object","$defs":{"n":{"anyOf":[
	{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}}},
	{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"required":["a"]}]}},
	"properties":{"a":{"$ref":"#/$defs/n"}}}`

func nestedArgs(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, n) + `1` + strings.Repeat(`}`, n))
}

// Arguments whose validation would take more than the step budget are
// refused before the validator runs (args_too_costly), however deep the
// doubling goes: 24 levels were 2^24 schema applications.
func TestValidationStepBudget(t *testing.T) {
	v, err := Compile(json.RawMessage(deepBranching))
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate(nestedArgs(24), 0)
	wantCode(t, err, taxonomy.CodeArgsTooCostly)
	if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindArgsInvalid || info.Retryable {
		t.Fatalf("%+v", info)
	}
	// A few levels are within the budget, and validated as before.
	err = v.Validate(nestedArgs(6), 0)
	wantCode(t, err, taxonomy.CodeArgsInvalid)
	if err := v.Validate(json.RawMessage(`{"a":{"a":{}}}`), 0); err != nil {
		t.Fatal(err)
	}
}

// The budget counts bytes too: large, plain arguments pass.
func TestValidationBudgetGrowsWithArguments(t *testing.T) {
	v, err := Compile(json.RawMessage(`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer","minimum":0,"maximum":9}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	xs := strings.TrimSuffix(strings.Repeat("7,", 200_000), ",")
	if err := v.Validate(json.RawMessage(`{"xs":[`+xs+`]}`), 0); err != nil {
		t.Fatal(err)
	}
}

// countdownCtx is a context whose deadline passes after its Err has been
// asked n times: a deadline during validation without a clock.
type countdownCtx struct {
	context.Context
	left atomic.Int64
	done chan struct{}
	once sync.Once
}

func newCountdown(n int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(n)
	return c
}

func (c *countdownCtx) Done() <-chan struct{} { return c.done }

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		c.once.Do(func() { close(c.done) })
		return context.DeadlineExceeded
	}
	return nil
}

func (c *countdownCtx) Deadline() (time.Time, bool) { return time.Time{}, true }

// Validation ends with the call's context: a deadline that passes while
// the steps are counted is a tool-timeout error with code
// deadline_exceeded that matches context.DeadlineExceeded; a cancelled
// context, its own error.
func TestValidationEndsWithItsContext(t *testing.T) {
	v, err := Compile(json.RawMessage(deepBranching))
	if err != nil {
		t.Fatal(err)
	}
	v.steps = 1 << 40 // only the context ends this one
	err = v.ValidateContext(newCountdown(3), nestedArgs(40), 0)
	wantCode(t, err, taxonomy.CodeDeadlineExceeded)
	if !errors.Is(err, context.DeadlineExceeded) || taxonomy.InfoOf(err).Kind != taxonomy.KindTimeout {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := v.ValidateContext(ctx, json.RawMessage(`{}`), 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if _, ok := taxonomy.From(v.ValidateContext(ctx, json.RawMessage(`{}`), 0)); ok {
		t.Fatal("a cancellation is returned as is")
	}
}

// Compiling honours its context: ended before, it compiles nothing.
func TestCompileContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CompileContext(ctx, json.RawMessage(`{"type":"object"}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	dctx, dcancel := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer dcancel()
	_, err := CompileContext(dctx, json.RawMessage(`{"type":"object"}`))
	wantCode(t, err, taxonomy.CodeDeadlineExceeded)
}

// 400 concurrent callers of the doubling schema each get args_too_costly
// within their own budget: the count is per call, and no call waits for
// another.
func TestValidationBudgetUnderConcurrency(t *testing.T) {
	v, err := Compile(json.RawMessage(deepBranching))
	if err != nil {
		t.Fatal(err)
	}
	v.steps = 1 << 12 // keep 400 callers quick under the race detector
	var wg sync.WaitGroup
	var costly, other atomic.Int64
	for range 400 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
			defer cancel()
			if taxonomy.InfoOf(v.ValidateContext(ctx, nestedArgs(30), 0)).Code == taxonomy.CodeArgsTooCostly {
				costly.Add(1)
			} else {
				other.Add(1)
			}
		}()
	}
	wg.Wait()
	if costly.Load() != 400 || other.Load() != 0 {
		t.Fatalf("%d too costly, %d other", costly.Load(), other.Load())
	}
}

// A validation large enough to run on its own goroutine gives the same
// verdicts as one on the caller's, and its caller stops waiting when its
// context ends.
func TestLargeValidationOnItsOwnGoroutine(t *testing.T) {
	v, err := Compile(json.RawMessage(`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer","maximum":9}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	xs := strings.TrimSuffix(strings.Repeat("7,", 5000), ",")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := v.ValidateContext(ctx, json.RawMessage(`{"xs":[`+xs+`]}`), 0); err != nil {
		t.Fatal(err)
	}
	err = v.ValidateContext(ctx, json.RawMessage(`{"xs":[`+xs+`,10]}`), 0)
	wantCode(t, err, taxonomy.CodeArgsInvalid)
	if f := taxonomy.InfoOf(err).Fields; len(f) != 1 || f[0].Type != "less_than_equal" {
		t.Fatalf("%+v", f)
	}

	// The validator holds (as a slow one would) until the caller's
	// context has ended: the caller returns at once, and the goroutine
	// ends when the validator does.
	entered, release, ran := make(chan struct{}), make(chan struct{}), make(chan struct{})
	testHookCheck = func() { close(entered); <-release }
	testHookChecked = func() { close(ran) }
	defer func() { testHookCheck, testHookChecked = nil, nil }()
	dctx, dcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.ValidateContext(dctx, json.RawMessage(`{"xs":[`+xs+`]}`), 0) }()
	<-entered
	dcancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	close(release)
	<-ran
}

// Validation nests at most MaxValidationDepth schema applications: a chain
// of 20 references at every level of arguments 250 deep is 5250, refused
// though its steps are few.
func TestValidationDepthBound(t *testing.T) {
	var defs []string
	for i := range 20 {
		defs = append(defs, fmt.Sprintf(`"r%d":{"$ref":"#/$defs/r%d"}`, i, i+1))
	}
	defs = append(defs, `"r20":{"type":"object","properties":{"a":{"$ref":"#/$defs/r0"}}}`)
	v, err := Compile(json.RawMessage(`{"type":"object","$ref":"#/$defs/r0","$defs":{` + strings.Join(defs, ",") + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate(nestedArgs(250), 0)
	wantCode(t, err, taxonomy.CodeArgsTooCostly)
	// 150 levels are 3150 applications: validated.
	wantCode(t, v.Validate(nestedArgs(150), 0), taxonomy.CodeArgsInvalid)
}

// FuzzSchemaBounds: any document is compiled or refused with a typed
// error, never a panic, and arguments checked against a compiled one end
// typed, within the budget.
func FuzzSchemaBounds(f *testing.F) {
	for _, doc := range []string{
		string(bombSchema(18)), string(bombSchema(6)), deepBranching, string(nestedSchema(40)),
		`{"type":"object","properties":{"a":{"$dynamicRef":"#x"}},"$dynamicAnchor":"x"}`,
		`{"type":"object","properties":{"a":{"$ref":"#/properties/b"},"b":{"$ref":"#/properties/a"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"a":{"required":["b"]}},"items":[{}]}`,
		`{"type":"object","patternProperties":{"^a+$":{"type":"string","pattern":"^(a|aa)+$"}},"unevaluatedProperties":false}`,
		`{"type":"object","properties":{"xs":{"type":"array","uniqueItems":true,"contains":{"const":1}}}}`,
	} {
		f.Add(doc, `{"a":{"a":{"a":"aaaa"}},"xs":[1,1,{"b":2}]}`)
	}
	f.Fuzz(func(t *testing.T, doc, args string) {
		v, err := Compile(json.RawMessage(doc))
		if err != nil {
			if _, ok := taxonomy.From(err); !ok {
				t.Fatalf("untyped: %v", err)
			}
			return
		}
		v.steps = 1 << 12
		if err := v.Validate(json.RawMessage(args), 0); err != nil {
			if _, ok := taxonomy.From(err); !ok {
				t.Fatalf("untyped: %v", err)
			}
		}
	})
}

// TestConcurrentValidationsBounded: callers whose contexts end while their
// large validations run leave those goroutines behind until their bounded
// work is done; at most MaxConcurrentValidations run at once. With that
// many held (as slow validations would be) and their callers gone, 100
// more callers are refused at once, rate-limited/validation_busy,
// retryable; once the held ones end, validations run again.
func TestConcurrentValidationsBounded(t *testing.T) {
	v, err := Compile(json.RawMessage(`{"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer","maximum":9}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"xs":[` + strings.TrimSuffix(strings.Repeat("7,", 5000), ",") + `]}`)
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free() // a failing test leaves no validation held
	var held sync.WaitGroup
	held.Add(MaxConcurrentValidations)
	var entered, ended atomic.Int64
	testHookCheck = func() {
		if entered.Add(1) <= MaxConcurrentValidations {
			held.Done()
		}
		<-release
	}
	testHookChecked = func() { ended.Add(1) }
	defer func() { testHookCheck, testHookChecked = nil, nil }()

	ctx, cancel := context.WithCancel(context.Background())
	var callers sync.WaitGroup
	for range MaxConcurrentValidations {
		callers.Go(func() {
			if err := v.ValidateContext(ctx, args, 0); !errors.Is(err, context.Canceled) {
				t.Errorf("a caller that stopped waiting: %v", err)
			}
		})
	}
	held.Wait()
	cancel()
	callers.Wait()
	// A context that can end (one that cannot is validated inline: there
	// is no deadline to stop waiting at).
	live, stop := context.WithCancel(context.Background())
	defer stop()
	var busy atomic.Int64
	var more sync.WaitGroup
	for range 100 {
		more.Go(func() {
			err := v.ValidateContext(live, args, 0)
			if info := taxonomy.InfoOf(err); info.Code != taxonomy.CodeValidationBusy || !info.Retryable {
				t.Errorf("past the bound: %v, want validation_busy, retryable", err)
				return
			}
			busy.Add(1)
		})
	}
	more.Wait()
	if busy.Load() != 100 || entered.Load() != MaxConcurrentValidations {
		t.Fatalf("%d refused, %d validations started; want 100 and %d", busy.Load(), entered.Load(), MaxConcurrentValidations)
	}
	free()
	for ended.Load() < MaxConcurrentValidations {
		runtime.Gosched()
	}
	// The goroutines give their slots back as they end.
	for i := 0; ; i++ {
		err := v.ValidateContext(live, args, 0)
		if err == nil {
			break
		}
		if taxonomy.InfoOf(err).Code != taxonomy.CodeValidationBusy || i > 1e6 {
			t.Fatalf("after the held validations ended: %v", err)
		}
		runtime.Gosched()
	}
}
