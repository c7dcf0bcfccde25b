package fallback

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
)

// TestCacheBounds: whatever is put, the cache keeps at most its entries
// and its bytes (content plus entryOverhead each), counted exactly.
func TestCacheBounds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, c := range []struct{ entries, bytes, size, puts int }{
		{4, 1 << 20, 10, 100},    // entries bind
		{1000, 10_000, 500, 100}, // bytes bind
		{3, 100, 10, 10},         // nothing fits: 10 + 128 > 100
		{2, 1 << 20, 0, 50},      // empty results count their overhead
	} {
		ca := newCache(c.entries, c.bytes)
		for i := range c.puts {
			ca.put(sha256.Sum256(fmt.Appendf(nil, "%d", i)), toolmw.Text(strings.Repeat("x", c.size)), now)
			n, b := ca.stats()
			if n > c.entries || b > c.bytes || b != n*(c.size+entryOverhead) {
				t.Fatalf("%+v: after %d puts %d entries, %d bytes", c, i+1, n, b)
			}
		}
		n, _ := ca.stats()
		t.Logf("%+v: %d kept", c, n)
	}
	// A replaced entry is counted once, with its new size.
	ca := newCache(10, 1<<20)
	k := key{1}
	ca.put(k, toolmw.Text("a"), now)
	ca.put(k, toolmw.Text("abc"), now.Add(time.Second))
	ca.put(k, toolmw.Text("older"), now) // an older result does not replace a newer one
	if n, b := ca.stats(); n != 1 || b != 3+entryOverhead {
		t.Fatalf("%d entries, %d bytes", n, b)
	}
}

// TestCacheCountsParts: a result counts its parts' bytes (Result.Size).
func TestCacheCountsParts(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	ca := newCache(10, 1<<20)
	res := toolmw.Parts(toolmw.ImagePart(make([]byte, 1000), "image/png"), toolmw.TextPart("abc"))
	ca.put(key{1}, res, now)
	if n, b := ca.stats(); n != 1 || b != 1000+len("image/png")+3+entryOverhead {
		t.Fatalf("%d entries, %d bytes", n, b)
	}
}
