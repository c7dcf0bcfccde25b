// Package resultkey is the one rule by which the layers that keep tools'
// results — the cache and the fallback's last good results — name a
// result: the SHA-256 of the tool's name, the partition the call is in
// (or the mark of results shared by every caller) and the canonical form
// of the call's arguments (middleware/internal/canonjson). The two layers
// given one store.Results therefore share their entries, and so do
// replicas, whatever the order of the keys or the spacing of the
// arguments each call was given.
//
// The rule is part of what replicas share: changing it orphans every
// entry kept under the old one, so the bytes hashed start with a version
// ([Version]), and a golden test pins a key.
package resultkey

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"sync"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/canonjson"
)

// MaxArgs is the longest arguments a result is kept or looked up for, in
// bytes: longer ones are not canonicalised (that costs their size in time
// and memory on every call), so such calls have no key.
const MaxArgs = 64 << 10

// Version starts the bytes hashed into a key: a new rule gets a new one.
const Version = "toolmw result key v1\x00"

// A Key names a kept result: 32 bytes whatever the arguments, so hostile
// arguments cost their hash, not their size, to keep.
type Key [sha256.Size]byte

// String returns k as 64 lower-case hexadecimal digits: the key a
// store.Results is given.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Rule says whose results a call may be served: Partition returns the
// partition of a call (a tenant, a user) and a result made in one is
// never served in another; nil Partition means results shared by every
// caller (the layers' WithSharedResults). The zero Rule shares.
type Rule struct {
	Partition func(ctx context.Context, call toolmw.Call) string
}

var null = json.RawMessage("null")

// Of returns the key of a call of call.Tool with args, or false when the
// call has none: its arguments are over [MaxArgs] or have no canonical
// form (not one JSON value, a duplicate key, keys alike but for case, a
// lone surrogate, nesting past canonjson.MaxDepth), or, with a Partition
// function, its partition is "" (no caller known: "" is not a partition
// every unknown caller shares) or the function panicked. Absent arguments
// are null. Each part is length-prefixed, so that no tool name, partition
// and arguments run into each other, and shared results are marked apart
// from every partition.
func (r Rule) Of(ctx context.Context, call toolmw.Call, args json.RawMessage) (Key, bool) {
	if len(args) > MaxArgs {
		return Key{}, false
	}
	shared, part := true, ""
	if r.Partition != nil {
		var ok bool
		part, ok = r.partOf(ctx, call)
		if !ok || part == "" {
			return Key{}, false
		}
		shared = false
	}
	return Make(call.Tool, shared, part, args)
}

// Make returns the key of a result of tool for args, shared by every
// caller or made in partition part, or false when args have no canonical
// form or are over MaxArgs. It does not refuse an empty partition: Of
// does.
func Make(tool string, shared bool, part string, args json.RawMessage) (Key, bool) {
	if len(args) > MaxArgs {
		return Key{}, false
	}
	if len(args) == 0 {
		args = null
	}
	bp := bufs.Get().(*[]byte)
	defer bufs.Put(bp)
	b := append((*bp)[:0], Version...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(tool)))
	b = append(b, tool...)
	if shared {
		b = append(b, 's')
	} else {
		b = append(b, 'p')
		b = binary.LittleEndian.AppendUint64(b, uint64(len(part)))
		b = append(b, part...)
	}
	b, ok := canonjson.Append(b, args)
	if cap(b) <= maxPooled {
		*bp = b
	}
	if !ok {
		return Key{}, false
	}
	return sha256.Sum256(b), true
}

// partOf calls the partition function, containing a panic.
func (r Rule) partOf(ctx context.Context, call toolmw.Call) (part string, ok bool) {
	defer func() {
		if recover() != nil {
			part, ok = "", false
		}
	}()
	return r.Partition(ctx, call), true
}

// bufs holds the buffers keys are made in; one larger than maxPooled is
// not kept.
var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooled = 64 << 10
