package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/cachepolicy"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/cache"
	"github.com/toolmw/toolmw/store"
	"github.com/toolmw/toolmw/store/storetest"
)

// The cache layer alone against failsafe-go's cachepolicy, on one tool,
// on two paths: the hit path (the same arguments every call: the result
// is served without calling the tool) and the miss path (arguments that
// cycle through more keys than either cache holds, so every call calls
// the tool and keeps its result); and toolmw with a store on a third,
// store_hit (see cacheSystems).
//
// cachepolicy keys nothing itself and keeps results in a Cache the user
// supplies: the peer is configured as a user would for tool calls, with
// a key of the tool's name and the raw arguments (no canonical form: the
// same arguments spaced or ordered otherwise miss) put in the context per
// call with ContextWithCacheKey, and a Cache of its own with the same
// TTL (a minute) and bound (256 entries, the oldest dropped first) as
// toolmw's defaults. toolmw's key is a SHA-256 of the tool, the partition
// and the canonical arguments, and a hit copies the result out.

// ttlCache is the peer's Cache: results with the time they were kept,
// at most max of them, the oldest dropped first, each served for ttl.
type ttlCache struct {
	ttl time.Duration
	max int

	mu    sync.Mutex
	m     map[string]ttlEntry
	order []string // keys, oldest first
}

type ttlEntry struct {
	res toolmw.Result
	at  time.Time
}

func newTTLCache(ttl time.Duration, max int) *ttlCache {
	return &ttlCache{ttl: ttl, max: max, m: map[string]ttlEntry{}}
}

func (c *ttlCache) Get(key string) (toolmw.Result, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	if !ok || time.Since(e.at) > c.ttl {
		return toolmw.Result{}, false
	}
	return e.res, true
}

func (c *ttlCache) Set(key string, res toolmw.Result) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[key]; !ok {
		c.order = append(c.order, key)
		if len(c.order) > c.max {
			delete(c.m, c.order[0])
			c.order = c.order[1:]
		}
	}
	c.m[key] = ttlEntry{res: res, at: time.Now()}
}

// failsafeCache calls tool through a failsafe-go cachepolicy keyed by the
// tool's name and the raw arguments.
func failsafeCache(name string, tool toolmw.Tool) toolmw.Tool {
	exec := failsafe.With[toolmw.Result](cachepolicy.NewBuilder[toolmw.Result](newTTLCache(time.Minute, 256)).Build())
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		ctx = cachepolicy.ContextWithCacheKey(ctx, name+"\x00"+string(args))
		return exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[toolmw.Result]) (toolmw.Result, error) {
			return tool(e.Context(), args)
		})
	}
}

// cacheSystems returns the systems compared on path; each is built per
// sub-benchmark, around tool. On the store paths only toolmw runs, with a
// store (storetest's in-memory one, so no network is measured): on
// "miss" a store that never finds a result (every call also encodes its
// result and writes it), on "store_hit" one that keeps every result (the
// process's own results miss, the store's are decoded and served).
func cacheSystems(path string, tool toolmw.Tool) []system {
	toolmwCache := func(opts ...cache.Option) func() toolmw.Tool {
		return func() toolmw.Tool {
			return toolmw.MustWrap(spec, tool, cache.New(time.Minute, append([]cache.Option{cache.WithSharedResults()}, opts...)...)) // spec is idempotent
		}
	}
	if path == "store_hit" {
		return []system{{"toolmw_cache_memstore", toolmwCache(cache.WithStore(&storetest.MemResults{}))}}
	}
	s := []system{
		{"toolmw_wrap_only", func() toolmw.Tool { return toolmw.MustWrap(spec, tool) }},
		{"toolmw_cache", toolmwCache()},
		{"failsafe_cachepolicy", func() toolmw.Tool { return failsafeCache(spec.Name, toolmw.MustWrap(spec, tool)) }},
	}
	if path == "miss" {
		never := &storetest.MemResults{}
		never.Fail("get", store.ErrNotFound)
		s = append(s, system{"toolmw_cache_memstore", toolmwCache(cache.WithStore(never))})
	}
	return s
}

// cachePaths are BenchmarkCache's paths.
var cachePaths = []string{"hit", "miss", "store_hit"}

// missArgs are more distinct arguments than either cache holds in process
// (256): cycled through, each call misses there.
var missArgs = func() []json.RawMessage {
	a := make([]json.RawMessage, 1024)
	for i := range a {
		a[i] = json.RawMessage(fmt.Sprintf(`{"city":"Paris-%d","units":"metric"}`, i))
	}
	return a
}()

// pathArgs returns the arguments of call i on path.
func pathArgs(path string, i int) json.RawMessage {
	if path == "hit" {
		return benchArgs
	}
	return missArgs[i%len(missArgs)]
}

// BenchmarkCache runs each system on each path. toolmw_wrap_only is the
// floor: toolmw.Wrap and the tool, no cache.
func BenchmarkCache(b *testing.B) {
	for _, path := range cachePaths {
		for _, s := range cacheSystems(path, noop) {
			b.Run(path+"/"+s.name, func(b *testing.B) {
				tool := s.make()
				ctx := context.Background()
				for i := range len(missArgs) { // warm up: the kept results
					if _, err := tool(ctx, pathArgs(path, i)); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					res, err := tool(ctx, pathArgs(path, i))
					i++
					if err != nil {
						b.Fatal(err)
					}
					sink = res
				}
			})
		}
	}
}

// TestCacheBenchPaths: on the hit paths each system calls the tool once
// per key, and on the miss path every time, so BenchmarkCache measures
// what it says.
func TestCacheBenchPaths(t *testing.T) {
	for _, path := range cachePaths {
		var n int
		counted := func(ctx context.Context, a json.RawMessage) (toolmw.Result, error) {
			n++
			return noop(ctx, a)
		}
		for _, s := range cacheSystems(path, counted) {
			if s.name == "toolmw_wrap_only" {
				continue
			}
			n = 0
			tool := s.make()
			rounds := 3
			for i := range rounds * len(missArgs) {
				if _, err := tool(context.Background(), pathArgs(path, i)); err != nil {
					t.Fatal(err)
				}
			}
			want := map[string]int{"hit": 1, "miss": rounds * len(missArgs), "store_hit": len(missArgs)}[path]
			if n != want {
				t.Errorf("%s %s: %d tool calls, want %d", path, s.name, n, want)
			}
		}
	}
}
