package redisstate_test

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain looks for leaked goroutines once the tests pass, as
// goleak.VerifyTestMain does, after the stores' write-behind retries have
// ended. A test that stops a node leaves operations its layers keep for
// the store (storeguard's Eventually): a timer tries them again every
// store.Rest, and a try in flight, a call within its store timeout that
// go-redis may spend in its own retry backoff, can outlive the test's
// cleanup by up to that timeout. It ends by itself; goleak's own retries
// (about a second) are shorter than the longest store timeout these tests
// use on a loaded machine, so TestMain waits for it first, up to
// flushWait.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		waitFlushes(flushWait)
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// flushWait bounds TestMain's wait for tries in flight: well past the
// longest store timeout of these tests (loadSlack) and go-redis's retry
// backoff within it.
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
