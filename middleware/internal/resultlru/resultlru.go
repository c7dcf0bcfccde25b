// Package resultlru is the in-process store of the layers that keep
// tools' results (the cache, the fallback's last good results): results
// by key, bounded in entries and bytes, the one used least recently
// dropped first.
package resultlru

import (
	"container/list"
	"sync"
	"time"
	"unsafe"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/partinfo"
	"github.com/toolmw/toolmw/middleware/internal/resultkey"
)

// EntryOverhead is what one kept result costs besides its content: the
// key, the list element and the map slot, about. Counted against the byte
// bound so that many empty results are bounded too.
const EntryOverhead = 128

// partOverhead is what one part costs besides its bytes: the Part itself
// (a result of many empty parts holds memory Result.Size does not count).
const partOverhead = int(unsafe.Sizeof(toolmw.Part{}))

// annotationsOverhead is what a part's annotations cost besides their
// strings' bytes.
const annotationsOverhead = int(unsafe.Sizeof(toolmw.Annotations{})) + 8

// Size returns what a kept result counts against the byte bound: its
// bytes, content and parts (toolmw.Result.Size), [EntryOverhead], and for
// each part the Part itself and its annotations.
func Size(res toolmw.Result) int {
	n := res.Size() + EntryOverhead
	for _, p := range res.Parts() {
		n += partOverhead
		if a := p.Annotations; a != nil {
			n += annotationsOverhead + len(a.LastModified)
			for _, s := range a.Audience {
				n += int(unsafe.Sizeof(s)) + len(s)
			}
		}
	}
	return n
}

// Cache holds results, bounded in entries and bytes, the least recently
// used dropped first. It is safe for concurrent use; its lock is never
// held across a call.
type Cache struct {
	maxEntries, maxBytes int

	mu    sync.Mutex
	m     map[resultkey.Key]*list.Element // of *entry
	order list.List                       // front: used most recently
	bytes int                             // Size of each entry
}

type entry struct {
	k    resultkey.Key
	res  toolmw.Result
	made time.Time // when the result was made
	size int
}

// New returns a Cache of at most maxEntries results and maxBytes bytes
// (see [Size]).
func New(maxEntries, maxBytes int) *Cache {
	return &Cache{maxEntries: maxEntries, maxBytes: maxBytes, m: map[resultkey.Key]*list.Element{}}
}

// Fits reports whether res can be kept: its Size is within the byte
// bound.
func (c *Cache) Fits(res toolmw.Result) bool { return Size(res) <= c.maxBytes }

// Put keeps res under k, made at made, when it fits: a copy of its parts
// (partinfo.Clone), so the caller given res cannot change what is kept. A
// result kept under k made later than made stays: a slower, older call
// that finished later does not replace a newer one.
func (c *Cache) Put(k resultkey.Key, res toolmw.Result, made time.Time) {
	n := Size(res)
	if n > c.maxBytes {
		return
	}
	res = partinfo.Clone(res)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		e := el.Value.(*entry)
		if made.Before(e.made) {
			return
		}
		c.bytes += n - e.size
		e.res, e.made, e.size = res, made, n
		c.order.MoveToFront(el)
	} else {
		c.m[k] = c.order.PushFront(&entry{k: k, res: res, made: made, size: n})
		c.bytes += n
	}
	for len(c.m) > c.maxEntries || c.bytes > c.maxBytes {
		c.drop(c.order.Back())
	}
}

// Get returns the result kept under k and when it was made, if it is at
// most ttl old at now (one made after now, by a clock set back, is
// fresh); an older one is dropped. Its parts are what is kept: copy them
// (partinfo.Clone) before they leave the layer.
func (c *Cache) Get(k resultkey.Key, now time.Time, ttl time.Duration) (toolmw.Result, time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[k]
	if !ok {
		return toolmw.Result{}, time.Time{}, false
	}
	e := el.Value.(*entry)
	if now.Sub(e.made) > ttl {
		c.drop(el)
		return toolmw.Result{}, time.Time{}, false
	}
	c.order.MoveToFront(el)
	return e.res, e.made, true
}

func (c *Cache) drop(el *list.Element) {
	e := c.order.Remove(el).(*entry)
	delete(c.m, e.k)
	c.bytes -= e.size
}

// Stats returns how many results the cache keeps and the bytes it counts.
func (c *Cache) Stats() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.bytes
}
