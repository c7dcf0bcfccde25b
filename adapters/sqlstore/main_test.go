package sqlstore_test

import (
	"bytes"
	"os"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain stops the tests' PostgreSQL server and looks for leaked
// goroutines once the tests pass, after the dedupe layer's write-behind
// tries have ended: the outage tests leave operations the layer keeps for
// its store (storeguard's Eventually), which a timer tries again every
// store.Rest, and a try in flight may outlive the test by up to its store
// timeout. TestMain waits for it first, up to flushWait.
func TestMain(m *testing.M) {
	code := m.Run()
	stopPostgres()
	if code == 0 {
		waitFlushes(flushWait)
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// flushWait bounds TestMain's wait for write-behind tries in flight: well
// past the outage tests' store timeout.
const flushWait = 10 * time.Second

// waitFlushes waits until no goroutine runs storeguard's flush, or d has
// passed.
func waitFlushes(d time.Duration) {
	buf := make([]byte, 1<<20)
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		n := runtime.Stack(buf, true)
		if !bytes.Contains(buf[:n], []byte("storeguard.(*Guard).flush")) {
			return
		}
	}
}
