package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestScenarios pins what the demo claims, scenario by scenario.
func TestScenarios(t *testing.T) {
	rows, err := run()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Row{}
	for _, r := range rows {
		got[r.Scenario] = r
	}
	names := []string{"transient_then_ok", "refusal", "retry_after_past_deadline", "unmapped_non_idempotent",
		"untyped_idempotent", "timeout_idempotent", "args_invalid", "not_permitted", "circuit_open",
		"upstream_timeout", "http_conflict", "run_budget_exhausted", "cancelled"}
	if len(rows) != len(names) {
		t.Fatalf("%d scenarios, want %d", len(rows), len(names))
	}
	for _, n := range names {
		if _, ok := got[n]; !ok {
			t.Fatalf("scenario %s missing", n)
		}
	}
	check := func(name string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("%s: %+v", name, got[name])
		}
	}
	r := got["refusal"]
	check("refusal", r.Attempts == 1 && r.Outcome == "refused" && strings.Contains(r.Told, `source="tool_refusal"`))
	r = got["transient_then_ok"]
	check("transient_then_ok", r.Attempts >= 2 && r.Outcome == "ok")
	r = got["retry_after_past_deadline"]
	check("retry_after_past_deadline", r.ElapsedMS < 100 && r.Outcome != "ok" && r.Code == "retry_wait_past_deadline")
	r = got["unmapped_non_idempotent"]
	check("unmapped_non_idempotent", r.Attempts == 1 && r.Code == "unmapped_failure" && !strings.Contains(r.Told, "alice"))
	r = got["untyped_idempotent"]
	check("untyped_idempotent", r.Attempts >= 2)
	r = got["timeout_idempotent"]
	check("timeout_idempotent", r.Attempts >= 2)
	r = got["cancelled"]
	check("cancelled", r.Attempts == 1 && r.Outcome == "cancelled")
	r = got["args_invalid"]
	check("args_invalid", r.Kind == "tool-args-invalid" && r.Attempts == 1 && !strings.Contains(r.Told, "two"))
	r = got["not_permitted"]
	check("not_permitted", r.Kind == "tool-not-permitted" && r.Outcome == "not_permitted")
	r = got["run_budget_exhausted"]
	check("run_budget_exhausted", r.Kind == "run-limit-exceeded")
	r = got["upstream_timeout"]
	check("upstream_timeout", r.Kind == "tool-timeout" && r.Code == "upstream_timeout" && r.Attempts == 3)
	r = got["http_conflict"]
	check("http_conflict", r.Kind == "tool-refused" && r.Code == "upstream_conflict" && r.Attempts == 1 && !strings.Contains(r.Told, "sk_live"))
	r = got["circuit_open"]
	check("circuit_open", r.Kind == "circuit-open" && r.Code == "circuit_open" && r.Attempts == 1)
	for _, r := range rows {
		if strings.Contains(r.Told, "sk_live") {
			t.Errorf("%s: a secret reached the model: %s", r.Scenario, r.Told)
		}
	}
}
