package taxonomy

import (
	"fmt"
	"sync"
	"testing"
)

// TestDeclare: a declared code is known, returned as given; a built-in code
// is known without it; a malformed code is not recorded; past MaxDeclared
// nothing more is; concurrent declarations all land.
func TestDeclare(t *testing.T) {
	t.Cleanup(func() { declared.set.Store(nil) })
	declared.set.Store(nil)
	if Declared("booking_not_cancellable") {
		t.Fatal("known before it was declared")
	}
	if got := Declare("booking_not_cancellable"); got != "booking_not_cancellable" || !Declared(got) {
		t.Fatalf("Declare = %q, Declared %v", got, Declared(got))
	}
	if !Declared(CodeUpstreamUnavailable) {
		t.Error("a built-in code is not known")
	}
	for _, bad := range []string{"", "Not Snake", "bad-code", "x\x00", string(make([]byte, 65))} {
		Declare(bad)
		if Declared(bad) {
			t.Errorf("%q was recorded", bad)
		}
	}
	var wg sync.WaitGroup
	for i := range 2 * MaxDeclared {
		wg.Go(func() { Declare(fmt.Sprintf("code_%d", i)) })
	}
	wg.Wait()
	if n := len(*declared.set.Load()); n != MaxDeclared {
		t.Errorf("%d codes kept, want MaxDeclared, %d", n, MaxDeclared)
	}
	if !Declared("booking_not_cancellable") {
		t.Error("an earlier code was dropped")
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = Declared("code_1") }); allocs != 0 {
		t.Errorf("Declared allocates %v times", allocs)
	}
}
