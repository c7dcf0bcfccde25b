package fallback

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"sync"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/canonjson"
	"github.com/toolmw/toolmw/middleware/internal/partinfo"
)

// entryOverhead is what one kept result costs besides its content: the
// key, the list element and the map slot, about. Counted against MaxBytes
// so that many empty results are bounded too.
const entryOverhead = 128

// key is a kept result's name: a hash of the call's partition and the
// canonical form of its arguments. The tool is implicit (one cache per
// tool). A fixed-size key: hostile arguments cost their hash, not their
// size, to keep.
type key [sha256.Size]byte

var null = json.RawMessage("null")

// key returns the cache key of a call, or false when its arguments have no
// canonical form (see middleware/internal/canonjson: not one JSON value, a duplicate
// key, a lone surrogate, nesting past 64) or, with a partition function,
// its partition is "" or could not be had: such a call is neither kept nor
// served. The partition goes first, length-prefixed, so that no
// partition and arguments run into each other.
func (l *layer) key(ctx context.Context, call toolmw.Call, args json.RawMessage) (key, bool) {
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	b := (*bp)[:0]
	if l.partition != nil {
		part, ok := l.partOf(ctx, call)
		if !ok || part == "" {
			return key{}, false // no partition known: nobody's to share
		}
		b = binary.LittleEndian.AppendUint64(b, uint64(len(part)))
		b = append(b, part...)
	}
	if len(args) == 0 {
		args = null // absent arguments are null
	}
	b, ok := canonjson.Append(b, args)
	if cap(b) <= maxPooled {
		*bp = b
	}
	if !ok {
		return key{}, false
	}
	return sha256.Sum256(b), true
}

// partOf calls the partition function, containing a panic.
func (l *layer) partOf(ctx context.Context, call toolmw.Call) (part string, ok bool) {
	defer func() {
		if recover() != nil {
			part, ok = "", false
		}
	}()
	return l.partition(ctx, call), true
}

// bufs holds the buffers keys are made in; one larger than maxPooled is
// not kept.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooled = 64 << 10

// cache holds one tool's last good results, bounded in entries and bytes,
// the least recently used dropped first. It is safe for concurrent use; its
// lock is never held across a call.
type cache struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	m     map[key]*list.Element // of *entry
	order list.List             // front: used most recently
	bytes int                   // size of each entry
}

type entry struct {
	k   key
	res toolmw.Result
	at  time.Time // when the result was made
}

func newCache(maxEntries, maxBytes int) *cache {
	return &cache{maxEntries: maxEntries, maxBytes: maxBytes, m: map[key]*list.Element{}}
}

// size is what a kept result counts against MaxBytes: its bytes, content
// and parts (toolmw.Result.Size), and entryOverhead.
func size(res toolmw.Result) int { return res.Size() + entryOverhead }

// put keeps res as the last good result of k, made at at, when it fits: a
// copy of its parts (partinfo.Clone), so the caller given res cannot
// change what is kept.
func (c *cache) put(k key, res toolmw.Result, at time.Time) {
	n := size(res)
	if n > c.maxBytes {
		return
	}
	res = partinfo.Clone(res)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		e := el.Value.(*entry)
		if at.Before(e.at) {
			return // a slower, older call finished later: keep the newer result
		}
		c.bytes += n - size(e.res)
		e.res, e.at = res, at
		c.order.MoveToFront(el)
	} else {
		c.m[k] = c.order.PushFront(&entry{k: k, res: res, at: at})
		c.bytes += n
	}
	for len(c.m) > c.maxEntries || c.bytes > c.maxBytes {
		c.drop(c.order.Back())
	}
}

// get returns the result kept for k if it is at most ttl old at now; an
// older one is dropped. Its parts are what is kept: copy them
// (partinfo.Clone) before they leave the layer.
func (c *cache) get(k key, now time.Time, ttl time.Duration) (toolmw.Result, time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[k]
	if !ok {
		return toolmw.Result{}, time.Time{}, false
	}
	e := el.Value.(*entry)
	if now.Sub(e.at) > ttl {
		c.drop(el)
		return toolmw.Result{}, time.Time{}, false
	}
	c.order.MoveToFront(el)
	return e.res, e.at, true
}

func (c *cache) drop(el *list.Element) {
	e := c.order.Remove(el).(*entry)
	delete(c.m, e.k)
	c.bytes -= size(e.res)
}

// stats returns how many results the cache keeps and the bytes it counts.
func (c *cache) stats() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.bytes
}
