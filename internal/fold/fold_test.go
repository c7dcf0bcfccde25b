package fold_test

import (
	"strings"
	"testing"
	"testing/quick"

	"github.com/toolmw/toolmw/internal/fold"
)

// TestAppendAgreesWithEqualFold: two strings fold to the same bytes
// exactly when strings.EqualFold says they are equal, for the keys that
// matter (ASCII, ſ, the Kelvin sign, Greek sigmas, invalid UTF-8) and for
// random pairs.
func TestAppendAgreesWithEqualFold(t *testing.T) {
	keys := []string{"to", "TO", "To", "tO", "s", "S", "ſ", "k", "K", "\u212a", "σ", "Σ", "ς", "ß", "ẞ", "ss",
		"destination", "deſtination", "DESTINATION", "\xff", "\xfe", "a\xffb", "", "é", "É", "i", "İ", "ı"}
	for _, a := range keys {
		for _, b := range keys {
			same := string(fold.Append(nil, a)) == string(fold.Append(nil, []byte(b)))
			if want := strings.EqualFold(a, b); same != want && validPair(a, b) {
				t.Errorf("%q and %q: folded equal %v, EqualFold %v", a, b, same, want)
			}
		}
	}
	if err := quick.Check(func(a, b string) bool {
		return !validPair(a, b) || (string(fold.Append(nil, a)) == string(fold.Append(nil, b))) == strings.EqualFold(a, b)
	}, nil); err != nil {
		t.Fatal(err)
	}
}

// validPair: EqualFold compares invalid bytes as U+FFFD each, as Append
// keeps them, but only for strings of valid UTF-8 is the comparison of
// interest to JSON (object keys are read as valid UTF-8 first).
func validPair(a, b string) bool {
	return strings.ToValidUTF8(a, "") == a && strings.ToValidUTF8(b, "") == b
}
