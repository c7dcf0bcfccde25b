package resultlru

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/resultkey"
)

func k(i int) resultkey.Key { return sha256.Sum256(fmt.Appendf(nil, "%d", i)) }

// TestCacheBounds (docs/guarantees.md cites it for the fallback, whose
// cache this is): whatever is put, the cache keeps at most its entries
// and its bytes (content plus EntryOverhead each), counted exactly.
func TestCacheBounds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct{ entries, bytes, size, puts int }{
		{4, 1 << 20, 10, 100},    // entries bind
		{1000, 10_000, 500, 100}, // bytes bind
		{3, 100, 10, 10},         // nothing fits: 10 + 128 > 100
		{2, 1 << 20, 0, 50},      // empty results count their overhead
	} {
		ca := New(c.entries, c.bytes)
		for i := range c.puts {
			ca.Put(k(i), toolmw.Text(strings.Repeat("x", c.size)), now)
			n, b := ca.Stats()
			if n > c.entries || b > c.bytes || b != n*(c.size+EntryOverhead) {
				t.Fatalf("%+v: after %d puts %d entries, %d bytes", c, i+1, n, b)
			}
		}
	}
	// A replaced entry is counted once, with its new size.
	ca := New(10, 1<<20)
	ca.Put(k(1), toolmw.Text("a"), now)
	ca.Put(k(1), toolmw.Text("abc"), now.Add(time.Second))
	ca.Put(k(1), toolmw.Text("older"), now) // an older result does not replace a newer one
	if n, b := ca.Stats(); n != 1 || b != 3+EntryOverhead {
		t.Fatalf("%d entries, %d bytes", n, b)
	}
	if res, made, ok := ca.Get(k(1), now.Add(time.Second), 0); !ok || res.Content != "abc" || !made.Equal(now.Add(time.Second)) {
		t.Fatalf("Get: %q, %v, %v; want the newer result", res.Content, made, ok)
	}
}

// TestCountsParts: a result counts its parts' bytes (Result.Size), and
// each part and its annotations their own memory, so a result of many
// empty parts is bounded too.
func TestCountsParts(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ca := New(10, 1<<20)
	pr := 0.5
	res := toolmw.Parts(toolmw.ImagePart(make([]byte, 1000), "image/png"),
		toolmw.Part{Kind: toolmw.PartText, Text: "abc", Annotations: &toolmw.Annotations{Audience: []string{"user"}, Priority: &pr, LastModified: "2026"}})
	ca.Put(k(1), res, now)
	want := 1000 + len("image/png") + 3 + EntryOverhead + 2*int(unsafe.Sizeof(toolmw.Part{})) +
		annotationsOverhead + len("2026") + int(unsafe.Sizeof("")) + len("user")
	if n, b := ca.Stats(); n != 1 || b != want {
		t.Fatalf("%d entries, %d bytes, want 1, %d", n, b, want)
	}
	empty := make([]toolmw.Part, 100_000)
	ca.Put(k(2), toolmw.Parts(empty...), now)
	if n, _ := ca.Stats(); n != 1 {
		t.Fatal("100,000 empty parts were kept under a bound of 1 MiB")
	}
}

// TestTTL: a result older than the TTL is dropped when looked up; one
// made after now (a clock set back) is fresh.
func TestTTL(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ca := New(10, 1<<20)
	ca.Put(k(1), toolmw.Text("a"), now)
	if _, _, ok := ca.Get(k(1), now.Add(time.Minute), time.Minute); !ok {
		t.Fatal("a result exactly the TTL old: not found")
	}
	if _, _, ok := ca.Get(k(1), now.Add(time.Minute+1), time.Minute); ok {
		t.Fatal("a result older than the TTL: found")
	}
	if n, _ := ca.Stats(); n != 0 {
		t.Fatal("an expired result looked up: still kept")
	}
	ca.Put(k(2), toolmw.Text("b"), now)
	if _, _, ok := ca.Get(k(2), now.Add(-time.Hour), time.Minute); !ok {
		t.Fatal("a clock set back: the result is not fresh")
	}
}

// TestCopies: what is kept is a copy of what was put.
func TestCopies(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ca := New(10, 1<<20)
	data := []byte("png")
	ca.Put(k(1), toolmw.Parts(toolmw.ImagePart(data, "image/png")), now)
	data[0] = 'X'
	res, _, _ := ca.Get(k(1), now, time.Minute)
	if got := string(res.Parts()[0].Data); got != "png" {
		t.Fatalf("kept data %q after the caller changed its own", got)
	}
}
