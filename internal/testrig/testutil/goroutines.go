package testutil

import (
	"bytes"
	"runtime"
)

// Goroutines returns how many goroutines share the caller's
// testing/synctest bubble or, called outside a bubble, how many goroutines
// the process runs (runtime.NumGoroutine).
//
// Inside a bubble, runtime.NumGoroutine is the wrong count: it also counts
// goroutines of other tests and of the runtime, which come and go while the
// bubble runs, so a count that fell back to a baseline does not mean the
// bubble's own goroutines have ended — and a bubble whose root returns while
// one of its goroutines still sleeps panics with a deadlock, taking the
// package's remaining tests with it. This reads the bubble of every
// goroutine from a full stack dump instead (the runtime prints
// "synctest bubble N" in a bubbled goroutine's header; the caller's own
// goroutine comes first).
func Goroutines() int {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var bubble []byte
	count := 0
	for len(buf) > 0 {
		line := buf
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			line, buf = buf[:i], buf[i+1:]
		} else {
			buf = nil
		}
		if !bytes.HasPrefix(line, []byte("goroutine ")) || !bytes.HasSuffix(line, []byte("]:")) {
			continue
		}
		id := bubbleOf(line)
		if bubble == nil { // the caller's goroutine
			if id == nil {
				return runtime.NumGoroutine()
			}
			bubble = id
		}
		if bytes.Equal(id, bubble) {
			count++
		}
	}
	return count
}

// bubbleOf returns the bubble id in a goroutine header such as
// "goroutine 7 [sleep (durable), synctest bubble 2]:", or nil.
func bubbleOf(header []byte) []byte {
	const mark = "synctest bubble "
	i := bytes.LastIndex(header, []byte(mark))
	if i < 0 {
		return nil
	}
	id := header[i+len(mark):]
	if j := bytes.IndexAny(id, ",]"); j >= 0 {
		id = id[:j]
	}
	return id
}
