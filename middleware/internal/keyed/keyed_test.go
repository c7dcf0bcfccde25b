package keyed_test

import (
	"fmt"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/internal/keyed"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type value struct{ key string }

func newValue(key string) *value { return &value{key} }

func TestGetMakesOnce(t *testing.T) {
	made := 0
	m := keyed.New(0, func(key string) *value { made++; return newValue(key) })
	a := m.Get("a")
	if a.key != "a" || m.Get("a") != a || made != 1 {
		t.Fatalf("Get(a) = %+v, made %d; want one value for the key", a, made)
	}
	if b := m.Get("b"); b == a || b.key != "b" || made != 2 {
		t.Fatal("b shares a's value")
	}
}

func TestBoundDropsLeastRecentlyUsed(t *testing.T) {
	m := keyed.New(2, newValue)
	a := m.Get("a")
	m.Get("b")
	m.Get("a") // a is used after b was added; b is not
	m.Get("c") // full: b goes
	if m.Len() != 2 {
		t.Fatalf("Len = %d, want the bound 2", m.Len())
	}
	if m.Get("a") != a {
		t.Fatal("a was dropped; want b, used least recently")
	}
	if m.Len() != 2 {
		t.Fatalf("Len = %d after a known key", m.Len())
	}
}

func TestDefaultBound(t *testing.T) {
	m := keyed.New(-1, newValue)
	for i := range keyed.DefaultMax + 10 {
		m.Get(fmt.Sprint(i))
	}
	if m.Len() != keyed.DefaultMax {
		t.Fatalf("Len = %d, want %d", m.Len(), keyed.DefaultMax)
	}
}

func TestConcurrent(t *testing.T) {
	m := keyed.New(8, newValue)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				key := fmt.Sprint((g + i) % 12)
				if v := m.Get(key); v.key != key {
					t.Errorf("Get(%s) = %s", key, v.key)
					return
				}
			}
		}()
	}
	wg.Wait()
	if m.Len() > 8 {
		t.Fatalf("Len = %d over the bound 8", m.Len())
	}
}

func BenchmarkGetKnown(b *testing.B) {
	m := keyed.New(0, newValue)
	m.Get("payments")
	b.ReportAllocs()
	for b.Loop() {
		m.Get("payments")
	}
}

func TestSharing(t *testing.T) {
	var s keyed.Sharing[*value]
	v := newValue("shared")
	key := func(toolmw.Call) string { return "k" }
	s.ByKey(key)
	s.Share(v)
	if s.Shared != v || s.Key != nil {
		t.Fatal("Share did not replace ByKey")
	}
	s.Share(nil) // one per tool
	if s.Shared != nil || s.Key != nil {
		t.Fatal("Share(nil) is not one per tool")
	}
	s.Share(v)
	s.ByKey(key)
	if s.Shared != nil || s.Key == nil {
		t.Fatal("ByKey did not replace Share")
	}
	s.ByKey(nil)
	if s.Shared != nil || s.Key != nil {
		t.Fatal("ByKey(nil) is not one per tool")
	}
	var why string
	reject := func(format string, args ...any) { why = fmt.Sprintf(format, args...) }
	s.Bound(3, reject)
	s.Bound(-1, reject)
	if s.Max != 3 || why != "WithMaxKeys(-1): n must not be negative" {
		t.Fatalf("Max = %d, why = %q; want 3 kept and the negative rejected", s.Max, why)
	}
	s.Bound(0, reject)
	if s.Max != 0 {
		t.Fatal("Bound(0) is not the default")
	}
}
