package mcp_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when a goroutine outlives them: every
// session, server and HTTP connection a test opens is closed by its end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
