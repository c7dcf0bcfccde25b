// Package keyed holds per-key state that a layer shares between the tools
// it wraps (a breaker per upstream, a limiter per upstream): a map from key
// to value, each value made on the key's first use, with a bound on how many
// keys it keeps.
package keyed

import (
	"sync"
	"sync/atomic"

	"github.com/toolmw/toolmw"
)

// DefaultMax is how many keys a Map keeps when it is given no bound: many
// more than the upstreams of one agent, few enough that a key function
// that wrongly returns a call id costs a bounded amount of memory.
const DefaultMax = 1024

// Map maps keys to values made on first use. When a new key would make it
// hold more than its bound, it first drops the key used least recently (to
// the nearest insertion: keys not used since an earlier key was added go
// before those used since). A dropped key gets a new value on its next use.
//
// A Map is safe for concurrent use. A lookup of a known key takes a read
// lock and does not allocate.
type Map[V any] struct {
	create func(key string) V
	bound  int

	mu    sync.RWMutex
	m     map[string]*entry[V]
	epoch atomic.Uint64 // advanced by each insertion
}

type entry[V any] struct {
	v    V
	used atomic.Uint64 // the epoch of its insertion or of its last use
}

// New returns a Map that makes the value of a new key with create and keeps
// at most bound keys; bound < 1 means [DefaultMax]. create runs under the
// Map's lock: it must be quick and must not call the Map.
// The Map is safe for concurrent use.
func New[V any](bound int, create func(key string) V) *Map[V] {
	if bound < 1 {
		bound = DefaultMax
	}
	return &Map[V]{create: create, bound: bound, m: map[string]*entry[V]{}}
}

// Get returns the value of key, making it on first use.
// It is safe for concurrent use.
func (m *Map[V]) Get(key string) V {
	m.mu.RLock()
	e := m.m[key]
	m.mu.RUnlock()
	if e == nil {
		return m.add(key)
	}
	// Store only when the epoch moved on, so that a hot key is read, not
	// written, by concurrent calls.
	if now := m.epoch.Load(); e.used.Load() != now {
		e.used.Store(now)
	}
	return e.v
}

// add makes and keeps the value of a key not found by Get.
func (m *Map[V]) add(key string) V {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.m[key]; e != nil {
		return e.v
	}
	if len(m.m) >= m.bound {
		m.dropLeastRecent()
	}
	e := &entry[V]{v: m.create(key)}
	e.used.Store(m.epoch.Add(1) - 1) // later uses record a later epoch
	m.m[key] = e
	return e.v
}

// dropLeastRecent drops the key with the oldest use. It runs only when
// the Map is full and a new key comes; its scan is bounded by the bound.
func (m *Map[V]) dropLeastRecent() {
	var oldest string
	var least uint64
	first := true
	for k, e := range m.m {
		if u := e.used.Load(); first || u < least {
			oldest, least, first = k, u, false
		}
	}
	delete(m.m, oldest)
}

// Len returns how many keys the Map holds. It is safe for concurrent use.
func (m *Map[V]) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.m)
}

// Sharing records how a layer shares its per-tool state (a breaker, a
// limiter) between the tools it wraps: one per tool (the zero Sharing),
// one value T for every tool (Shared), or one per key (Key), at most Max
// keys (0 means DefaultMax). Shared and Key replace each other. A Sharing
// is configuration, written by options before the layer is built.
// It is not safe for concurrent use: options write it before the layer
// is built, and the layer only reads it.
type Sharing[T comparable] struct {
	Shared T
	Key    func(toolmw.Call) string
	Max    int
}

// Share makes every tool share v; the zero T means one per tool.
// Not safe for concurrent use (see Sharing).
func (s *Sharing[T]) Share(v T) {
	var zero T
	s.Shared = v
	if v != zero {
		s.Key = nil
	}
}

// ByKey keeps one value per key(call); nil means one per tool.
// Not safe for concurrent use (see Sharing).
func (s *Sharing[T]) ByKey(key func(toolmw.Call) string) {
	s.Key = key
	if key != nil {
		var zero T
		s.Shared = zero
	}
}

// Bound sets Max to n (0 means DefaultMax), the value of a layer's
// WithMaxKeys option. A negative n is not usable: Bound leaves Max as it
// was and tells reject why. Not safe for concurrent use (see Sharing).
func (s *Sharing[T]) Bound(n int, reject func(format string, args ...any)) {
	if n < 0 {
		reject("WithMaxKeys(%d): n must not be negative", n)
		return
	}
	s.Max = n
}
