// Package bench compares toolmw with the libraries a user would pick
// instead, side by side in one run: see RESULTS.md and run.sh.
package bench

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
