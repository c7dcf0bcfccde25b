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

// callIDShapes are call ids in the shapes model APIs use, none holding a
// secret: OpenAI (call_ and 24 letters and digits), Anthropic (toolu_01
// and base62), the Responses API (fc_ and hex), Mistral (9 letters and
// digits), a framework's own (chatcmpl-tool- and hex).
var callIDShapes = []struct{ name, id string }{
	{"openai", "call_a1B2c3D4e5F6g7H8i9J0k1L2"},
	{"anthropic", "toolu_01A09q90qw90lq917835lq9"},
	{"responses", "fc_67ab12cd34ef56ab78cd90ef12ab34cd56ef78ab"},
	{"mistral", "D681PevKs"},
	{"vllm", "chatcmpl-tool-4f2a9c1e7b3d4e5f8a6b0c2d1e3f4a5b"},
}

// BenchmarkSafeCallID: SafeCallID runs on every call that has a call id;
// its clean path is measured per shape.
func BenchmarkSafeCallID(b *testing.B) {
	for _, s := range callIDShapes {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if SafeCallID(s.id) != s.id {
					b.Fatal("replaced")
				}
			}
		})
	}
}
