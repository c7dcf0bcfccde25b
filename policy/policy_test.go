package policy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/budget"
	"github.com/toolmw/toolmw/clock"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/policy"
	"github.com/toolmw/toolmw/taxonomy"
)

const good = `{
  "version": 1,
  "defaults": {
    "layers": ["retry", "breaker", "timeout"],
    "timeout": "5s",
    "retry": {"max_attempts": 2, "base_delay": "0s", "max_delay": "0s"},
    "breaker": {"consecutive_failures": 3, "open_for": "1h"}
  },
  "tools": {
    "search_flights": {
      "timeout": "2s",
      "retry": {"max_attempts": 4}
    },
    "book_flight": {
      "layers": ["runlimit", "breaker", "ratelimit", "bulkhead", "timeout"],
      "max_calls_per_run": 1,
      "rate_limit": {"per_second": 5, "burst": 2},
      "bulkhead": {"max_concurrent": 2, "max_queue": 4}
    }
  }
}`

func TestPolicies(t *testing.T) {
	s, err := policy.New("policy.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	search := s.Policy("search_flights")
	if search.Timeout != 2*time.Second || search.Retry.MaxAttempts != 4 || search.Breaker.ConsecutiveFailures != 3 ||
		strings.Join(search.Layers, ",") != "retry,breaker,timeout" {
		t.Errorf("search_flights: %+v; want its own timeout and attempts over the defaults", search)
	}
	book := s.Policy("book_flight")
	if book.MaxCallsPerRun != 1 || book.RateLimit.PerSecond != 5 || book.Bulkhead.MaxQueue != 4 || book.Timeout != 5*time.Second {
		t.Errorf("book_flight: %+v", book)
	}
	// A tool the file does not name gets the defaults.
	other := s.Policy("get_weather")
	if other.Timeout != 5*time.Second || other.Retry.MaxAttempts != 2 {
		t.Errorf("a tool missing from the file: %+v, want the defaults", other)
	}
}

func TestInvalidDocuments(t *testing.T) {
	cases := []struct {
		name, doc string
		line      int
		field     string
		reason    string
	}{
		{"unknown field", "{\n \"defaults\": {\n  \"timeout\": \"1s\",\n  \"retries\": 3\n }\n}", 4, "defaults.retries", "unknown field"},
		{"bad duration", "{\"tools\": {\n \"a\": {\"timeout\": \"5 seconds\"}}}", 2, "tools.a.timeout", "not a duration"},
		{"duration as a number", "{\"tools\": {\n \"a\": {\n \"timeout\": 5}}}", 3, "tools.a.timeout", "must be a duration"},
		{"negative limit", "{\"tools\": {\"a\": {\n\"layers\": [\"bulkhead\"],\n \"bulkhead\": {\n  \"max_concurrent\": -1}}}}", 4, "tools.a.bulkhead.max_concurrent", "below 1"},
		{"negative duration", "{\"defaults\": {\"breaker\": {\"open_for\": \"-1s\"}}}", 1, "defaults.breaker.open_for", "negative"},
		{"unknown layer", "{\"defaults\": {\n\"layers\": [\"retry\",\n \"retyr\"]}}", 3, "defaults.layers[1]", "unknown layer"},
		{"layer twice", "{\"defaults\": {\"layers\": [\"retry\", \"retry\"]}}", 1, "defaults.layers[1]", "twice"},
		{"key twice", "{\"defaults\": {\n\"timeout\": \"1s\",\n\"timeout\": \"2s\"}}", 3, "timeout", "twice"},
		{"syntax", "{\"defaults\": {\n\"timeout\": \"1s\",,\n}}", 2, "", "not valid JSON"},
		{"ends early", "{\"defaults\": {", 1, "", "ends early"},
		{"rate limit without rate", "{\"tools\": {\"a\": {\n\"layers\": [\"ratelimit\"]}}}", 2, "tools.a.rate_limit.per_second", "needs a rate"},
		{"settings without the layer", "{\"tools\": {\"a\": {\n\"bulkhead\": {\"max_concurrent\": 2}}}}", 2, "tools.a.bulkhead", "do not include bulkhead"},
		{"approval without a desk", "{\"tools\": {\"a\": {\"layers\": [\"approval\"]}}}", 0, "tools.a.layers", "needs a Desk"},
		{"ratio out of range", "{\"defaults\": {\"breaker\": {\"failure_ratio\": 1.5}}}", 1, "defaults.breaker.failure_ratio", "not in (0, 1]"},
		{"fraction", "{\"defaults\": {\"retry\": {\"max_attempts\": 2.5}}}", 1, "defaults.retry.max_attempts", "whole number"},
		{"huge", "{\"defaults\": {\"retry\": {\"max_attempts\": 1e300}}}", 1, "defaults.retry.max_attempts", "above"},
		{"cap below base", "{\"defaults\": {\"retry\": {\"base_delay\": \"2s\", \"max_delay\": \"1s\"}}}", 1, "defaults.retry.max_delay", "below"},
		{"bad tool name", "{\"tools\": {\"a b\": {}}}", 1, "tools.a b", "not a tool name"},
		{"not an object", "[1, 2]", 1, "", "must be an object"},
		{"version", "{\"version\": 2}", 1, "version", "only version"},
		{"deep", "{\"defaults\": " + strings.Repeat("[", 40) + strings.Repeat("]", 40) + "}", 1, "", "nest deeper"},
		{"trailing", "{} {}", 1, "", "after the document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := policy.New("p.json", []byte(c.doc))
			var pe *policy.Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *policy.Error", err)
			}
			if pe.File != "p.json" || pe.Line != c.line || pe.Field != c.field || !strings.Contains(pe.Reason, c.reason) {
				t.Errorf("got %s (file %q line %d field %q); want line %d, field %q, reason with %q",
					err, pe.File, pe.Line, pe.Field, c.line, c.field, c.reason)
			}
			info := taxonomy.InfoOf(err)
			if !errors.Is(err, taxonomy.ErrDefinitionInvalid) || info.Code != taxonomy.CodeOptionInvalid {
				t.Errorf("%v: kind %s code %s, want option_invalid", err, info.Kind, info.Code)
			}
			if want := fmt.Sprintf("p.json:%d: ", c.line); c.line > 0 && !strings.Contains(err.Error(), want) {
				t.Errorf("the message %q does not start with the place %q", err, want)
			}
		})
	}
	if _, err := policy.New("big.json", []byte(`{"x":"`+strings.Repeat("a", policy.MaxFileSize)+`"}`)); err == nil ||
		!strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file over MaxFileSize: %v", err)
	}
}

func TestEnvOverrides(t *testing.T) {
	t.Setenv("TOOLMW_POLICY__DEFAULTS__TIMEOUT", "9s")
	t.Setenv("TOOLMW_POLICY__TOOLS__SEARCH_FLIGHTS__RETRY__MAX_ATTEMPTS", "7")
	t.Setenv("toolmw_policy__tools__book_flight__layers", "runlimit, breaker, ratelimit, bulkhead")
	t.Setenv("OTHER__DEFAULTS__TIMEOUT", "1s") // another prefix
	s, err := policy.New("policy.json", []byte(good), policy.WithEnv("TOOLMW_POLICY"))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Policy("get_weather"); p.Timeout != 9*time.Second {
		t.Errorf("defaults' timeout %v, want 9s from the environment", p.Timeout)
	}
	if p := s.Policy("search_flights"); p.Retry.MaxAttempts != 7 || p.Timeout != 2*time.Second {
		t.Errorf("search_flights: attempts %d timeout %v; want 7 from the environment and its own 2s", p.Retry.MaxAttempts, p.Timeout)
	}
	if p := s.Policy("book_flight"); strings.Join(p.Layers, ",") != "runlimit,breaker,ratelimit,bulkhead" {
		t.Errorf("book_flight's layers %v", p.Layers)
	}
	for name, value := range map[string]string{
		"TOOLMW_POLICY__TOOLS__NO_SUCH_TOOL__TIMEOUT":               "1s",
		"TOOLMW_POLICY__DEFAULTS__RETRY__ATTEMPTS":                  "1",
		"TOOLMW_POLICY__DEFAULTS__TIMEOUT":                          "soon",
		"TOOLMW_POLICY__DEFAULTS__RETRY":                            "3",
		"TOOLMW_POLICY__TIMEOUT":                                    "1s",
		"TOOLMW_POLICY__TOOLS__SEARCH_FLIGHTS__RETRY__MAX_ATTEMPTS": "-1",
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv(name, value)
			_, err := policy.New("policy.json", []byte(good), policy.WithEnv("TOOLMW_POLICY"))
			var pe *policy.Error
			if !errors.As(err, &pe) || pe.File != "environment" || pe.Field != name {
				t.Fatalf("%s=%s: %v; want an error naming the variable", name, value, err)
			}
		})
	}
}

// rig is a tool under a Set, with a switch to make it fail.
type rig struct {
	set   *policy.Set
	tool  toolmw.Tool
	runs  atomic.Int64
	down  atomic.Bool
	clock *clock.Fake
}

func newRig(t *testing.T, name, doc string) *rig {
	t.Helper()
	r := &rig{clock: clock.NewFake(time.Unix(1_700_000_000, 0))}
	var err error
	r.set, err = policy.New("policy.json", []byte(doc), policy.WithClock(r.clock))
	if err != nil {
		t.Fatal(err)
	}
	r.tool = toolmw.MustWrap(toolmw.Spec{Name: name, Idempotent: true}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		r.runs.Add(1)
		if r.down.Load() {
			return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")
		}
		return toolmw.Text("ok"), nil
	}, r.set.Middleware())
	return r
}

func (r *rig) call() error {
	_, err := r.tool(context.Background(), json.RawMessage(`{}`))
	return err
}

const breakerDoc = `{"defaults": {"layers": ["breaker", "timeout"], "timeout": "%s",
  "breaker": {"consecutive_failures": 3, "open_for": "%s"}}}`

func TestReloadKeepsBreakerState(t *testing.T) {
	r := newRig(t, "search", fmt.Sprintf(breakerDoc, "5s", "1h"))
	r.down.Store(true)
	for range 3 {
		_ = r.call()
	}
	if err := r.call(); taxonomy.InfoOf(err).Kind != taxonomy.KindCircuitOpen {
		t.Fatalf("after three failures: %v, want circuit-open", err)
	}
	// A reload that changes another layer keeps the open breaker.
	if err := r.set.Update([]byte(fmt.Sprintf(breakerDoc, "7s", "1h"))); err != nil {
		t.Fatal(err)
	}
	if r.set.Policy("search").Timeout != 7*time.Second {
		t.Fatal("the reload did not take")
	}
	runs := r.runs.Load()
	if err := r.call(); taxonomy.InfoOf(err).Kind != taxonomy.KindCircuitOpen || r.runs.Load() != runs {
		t.Fatalf("after a reload of the timeout: %v; want the breaker still open, the tool not run", err)
	}
	// An invalid document changes nothing.
	if err := r.set.Update([]byte(`{"defaults": {"layers": ["breaker", "timeuot"]}}`)); err == nil {
		t.Fatal("an invalid document was accepted")
	}
	if err := r.call(); taxonomy.InfoOf(err).Kind != taxonomy.KindCircuitOpen || r.set.Policy("search").Timeout != 7*time.Second {
		t.Fatalf("after an invalid reload: %v; want the running policies untouched", err)
	}
	// A breaker whose own settings change starts afresh (documented).
	if err := r.set.Update([]byte(fmt.Sprintf(breakerDoc, "7s", "2h"))); err != nil {
		t.Fatal(err)
	}
	r.down.Store(false)
	if err := r.call(); err != nil {
		t.Fatalf("after the breaker's settings changed: %v, want a fresh breaker", err)
	}
}

// TestReloadUnderLoad: 100 callers call without pause while the document
// is reloaded, valid and invalid, again and again. Every call ends in
// exactly one outcome, the ok tool's calls all succeed, and the tripped
// tool's breaker stays open throughout (its calls never reach it).
func TestReloadUnderLoad(t *testing.T) {
	const callers, reloads = 100, 200
	docs := []string{fmt.Sprintf(breakerDoc, "5s", "1h"), fmt.Sprintf(breakerDoc, "6s", "1h"), `{"defaults": {"layers": ["nope"]}}`}
	r := newRig(t, "ok_tool", docs[0])
	var trippedRuns atomic.Int64
	tripped := toolmw.MustWrap(toolmw.Spec{Name: "tripped_tool"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		trippedRuns.Add(1)
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "down")
	}, r.set.Middleware())
	for range 3 {
		_, _ = tripped(context.Background(), nil)
	}
	if trippedRuns.Load() != 3 {
		t.Fatalf("the tripped tool ran %d times, want 3", trippedRuns.Load())
	}

	stop := make(chan struct{})
	var started, ended, okCalls, openCalls atomic.Int64
	var bad sync.Map
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				started.Add(1)
				var err error
				if i%2 == 0 {
					err = r.call()
					if err == nil {
						okCalls.Add(1)
					} else {
						bad.Store(err.Error(), true)
					}
				} else {
					_, err = tripped(context.Background(), nil)
					if taxonomy.InfoOf(err).Kind == taxonomy.KindCircuitOpen {
						openCalls.Add(1)
					} else {
						bad.Store(fmt.Sprint("tripped tool: ", err), true)
					}
				}
				ended.Add(1)
			}
		}()
	}
	invalid := 0
	for i := range reloads {
		// Calls run between any two reloads.
		for seen := ended.Load(); ended.Load() < seen+callers/4; {
			runtime.Gosched()
		}
		if err := r.set.Update([]byte(docs[i%len(docs)])); err != nil {
			invalid++
		}
	}
	close(stop)
	wg.Wait()
	bad.Range(func(k, _ any) bool { t.Errorf("an unexpected outcome: %v", k); return true })
	if started.Load() != ended.Load() || okCalls.Load()+openCalls.Load() != ended.Load() {
		t.Errorf("%d calls started, %d ended, %d ok + %d circuit-open", started.Load(), ended.Load(), okCalls.Load(), openCalls.Load())
	}
	if trippedRuns.Load() != 3 {
		t.Errorf("the tripped tool ran %d times, want 3: a reload reset its breaker", trippedRuns.Load())
	}
	if invalid != reloads/len(docs) {
		t.Errorf("%d reloads refused, want %d", invalid, reloads/len(docs))
	}
	t.Logf("%d calls during %d reloads", ended.Load(), reloads)
}

func TestWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	write := func(doc string) {
		t.Helper()
		// Write a new file and rename it over: a reader never sees half.
		tmp := path + ".new"
		if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf(breakerDoc, "5s", "1h"))
	s, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Watch(ctx, 100*time.Millisecond, func(err error) {
			select {
			case errs <- err:
			default:
			}
		})
	}()
	write(fmt.Sprintf(breakerDoc, "8s", "1h"))
	deadline := time.Now().Add(time.Minute) // generous: a loaded machine
	for s.Policy("x").Timeout != 8*time.Second {
		if time.Now().After(deadline) {
			t.Fatal("the watched file's change was never loaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
	write(`{"defaults": {"timeout": "8 s"}}`)
	select {
	case err := <-errs:
		var pe *policy.Error
		if !errors.As(err, &pe) || pe.Field != "defaults.timeout" || pe.File != path {
			t.Errorf("the invalid file was reported as %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the invalid file was never reported")
	}
	if s.Policy("x").Timeout != 8*time.Second {
		t.Error("the invalid file changed the running policies")
	}
	cancel()
	<-done
}

func TestStack(t *testing.T) {
	s, err := policy.New("policy.json", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Stack(middleware.Default())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := st.String(), "tracing → logging → events → policy → recovery → redact → classify → tool"; got != want {
		t.Errorf("the stack is %s, want %s", got, want)
	}
}

func TestApprovalLayer(t *testing.T) {
	desk := approval.NewDesk()
	s, err := policy.New("policy.json", []byte(`{"tools": {"refund": {"layers": ["approval", "timeout"]}}}`), policy.WithDesk(desk))
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int64
	refund := toolmw.MustWrap(toolmw.Spec{Name: "refund"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		runs.Add(1)
		return toolmw.Text("refunded"), nil
	}, s.Middleware())
	ctx := budget.WithRun(context.Background(), budget.WithID("run-1"))
	_, err = refund(toolmw.WithCallID(ctx, "call_1"), json.RawMessage(`{"booking":"B-1"}`))
	if taxonomy.InfoOf(err).Code != taxonomy.CodeApprovalPending || runs.Load() != 0 {
		t.Fatalf("the gated call: %v, %d runs; want approval_pending and no run", err, runs.Load())
	}
}

func FuzzNew(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"defaults": {"layers": ["ratelimit"], "rate_limit": {"per_second": 1e-9}}}`))
	f.Add([]byte(`{"tools": {"a": {"retry": {"max_attempts": 1, "max_delay": "1ns"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := policy.New("f.json", data)
		if err != nil {
			var pe *policy.Error
			if !errors.As(err, &pe) || taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
				t.Fatalf("an error that is not an option_invalid *policy.Error: %v", err)
			}
			return
		}
		_ = s.Policy("a")
	})
}

// TestErrorsBounded: an error quotes at most a bounded part of what the
// document holds, however long its keys and values.
func TestErrorsBounded(t *testing.T) {
	long := strings.Repeat("k", 500_000)
	for _, doc := range []string{
		`{"defaults": {"` + long + `": 1}}`,
		`{"tools": {"` + long + `": {}}}`,
		`{"defaults": {"timeout": "` + long + `"}}`,
		`{"defaults": {"layers": ["` + long + `"]}}`,
	} {
		_, err := policy.New("p.json", []byte(doc))
		if err == nil || len(err.Error()) > 1024 {
			t.Errorf("an error of %d bytes: %.200s", len(fmt.Sprint(err)), err)
		}
	}
}
