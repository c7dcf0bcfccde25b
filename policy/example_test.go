package policy_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/policy"
	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	set, err := policy.New("policy.json", []byte(`{
  "defaults": {"layers": ["breaker", "timeout"], "timeout": "10s",
               "breaker": {"consecutive_failures": 2, "open_for": "1m"}},
  "tools": {"search_flights": {"timeout": "3s"}}
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(set.Policy("search_flights").Timeout, set.Policy("get_weather").Timeout)

	search := toolmw.MustWrap(toolmw.Spec{Name: "search_flights"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Transient(taxonomy.CodeUpstreamUnavailable, "the supplier is down")
	}, set.Middleware())
	for range 3 {
		_, err = search(context.Background(), nil)
	}
	fmt.Println(taxonomy.InfoOf(err).Code)

	// A reload that changes the timeout keeps the open breaker.
	_ = set.Update([]byte(`{"defaults": {"layers": ["breaker", "timeout"], "timeout": "5s",
               "breaker": {"consecutive_failures": 2, "open_for": "1m"}}}`))
	_, err = search(context.Background(), nil)
	fmt.Println(set.Policy("search_flights").Timeout, taxonomy.InfoOf(err).Code)

	// An invalid document is refused with its place, and changes nothing.
	err = set.Update([]byte(`{"defaults": {
  "timeout": "5 s"}}`))
	fmt.Println(err)
	// Output:
	// 3s 10s
	// circuit_open
	// 5s circuit_open
	// policy: policy.json:2: defaults.timeout: "5 s" is not a duration (such as "500ms" or "30s")
}
