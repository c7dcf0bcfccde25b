package clock_test

import (
	"fmt"
	"time"

	"github.com/toolmw/toolmw/clock"
)

// A Fake clock moves only when the test says so, so code that waits can be
// driven step by step.
func ExampleFake() {
	fake := clock.NewFake(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	done := make(chan time.Time)
	go func() {
		t := fake.NewTimer(30 * time.Second) // the code under test waits
		done <- <-t.C()
	}()
	fake.WaitForTimers(1) // once it waits,
	fake.Advance(30 * time.Second)
	fmt.Println((<-done).Format(time.TimeOnly)) // its timer fires at once
	// Output:
	// 09:00:30
}
