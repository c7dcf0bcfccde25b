package toolmw

import (
	"testing"
	"unsafe"
)

// TestCallRecordSize: the call record is the one allocation Wrap makes per
// call; it stays within the 64-byte size class, so a field added to it
// (rather than to the rarely written notes) shows here.
func TestCallRecordSize(t *testing.T) {
	if n := unsafe.Sizeof(callCtx{}); n > 64 {
		t.Errorf("callCtx is %d bytes, more than 64", n)
	}
}
