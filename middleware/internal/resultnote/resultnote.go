// Package resultnote lets a layer that keeps results (the fallback) learn
// from a cache inside it that the result it got was served from a kept
// one, and when that was made: the fallback then does not take the
// result for a new one (its age would read as zero, and a result served
// again and again would never grow old). The root package has no note
// for it in the call record (toolmw.Call); this one travels in the
// context the outer layer gives the layers inside.
package resultnote

import (
	"context"
	"sync/atomic"
	"time"
)

type key struct{}

// A Note is where a cache writes that it served a kept result. Its zero
// value says none was; it is safe for concurrent use (a hedge may run the
// layers inside on other goroutines).
type Note struct {
	made atomic.Int64 // unix nanoseconds of the kept result's making; 0: none served
}

// noteCtx is a context carrying a Note: the parent and the Note in one
// allocation.
type noteCtx struct {
	context.Context
	note Note
}

func (c *noteCtx) Value(k any) any {
	if k == any(key{}) {
		return &c.note
	}
	return c.Context.Value(k)
}

// Watch returns ctx carrying a new Note, for the layers inside to fill.
func Watch(ctx context.Context) (context.Context, *Note) {
	c := &noteCtx{Context: ctx}
	return c, &c.note
}

// Served records, in the Note ctx carries if any, that the call was
// served a kept result made at made.
func Served(ctx context.Context, made time.Time) {
	if n, ok := ctx.Value(key{}).(*Note); ok {
		ns := made.UnixNano()
		if ns == 0 {
			ns = 1 // 0 means none
		}
		n.made.Store(ns)
	}
}

// Made returns when the kept result served was made, and whether one was.
func (n *Note) Made() (time.Time, bool) {
	ns := n.made.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}
