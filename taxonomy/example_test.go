package taxonomy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolmw/toolmw/taxonomy"
)

func Example() {
	refusal := taxonomy.Refusal("booking_not_cancellable", "this fare is non-refundable")
	outage := taxonomy.Transient("supplier_unavailable", "the supplier is down").WithRetryAfter(2 * time.Second)
	bug := errors.New("nil map write at ledger.go:42")

	for _, err := range []error{refusal, outage, bug} {
		retry, after := taxonomy.ShouldRetry(err, false)
		info := taxonomy.InfoOf(err)
		fmt.Printf("%s/%s retry=%v after=%v outcome=%s\n", info.Kind, info.Code, retry, after, taxonomy.OutcomeOf(err))
	}
	fmt.Println(errors.Is(refusal, taxonomy.ErrRefused))

	js, _ := json.Marshal(taxonomy.InfoOf(outage))
	fmt.Println(string(js))
	// Output:
	// tool-refused/booking_not_cancellable retry=false after=0s outcome=refused
	// tool-failed/supplier_unavailable retry=true after=2s outcome=failed
	// tool-failed/unmapped_failure retry=false after=0s outcome=failed
	// true
	// {"kind":"tool-failed","code":"supplier_unavailable","retryable":true,"retry_after":2,"message":"the supplier is down"}
}

// Declare a code once, where it is named: tracing then writes it on spans
// and metrics as it is, instead of as "_OTHER".
func ExampleDeclare() {
	codeNotCancellable := taxonomy.Declare("booking_not_cancellable")
	err := taxonomy.Refusal(codeNotCancellable, "this fare is non-refundable")
	fmt.Println(taxonomy.InfoOf(err).Code, taxonomy.Declared(codeNotCancellable))
	// Output: booking_not_cancellable true
}
