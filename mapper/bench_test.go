package mapper_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

func BenchmarkClassify(b *testing.B) {
	// Twenty rules of every level; the last sentinel is the one that matches.
	var rules []mapper.Rule
	for i := range 16 {
		rules = append(rules, mapper.Is(fmt.Errorf("sentinel %d", i), mapper.Permanent("miss")))
	}
	rules = append(rules,
		mapper.Type[*statusErr](mapper.Permanent("miss")),
		mapper.Interface[interface{ Timeout() bool }](mapper.Permanent("miss")),
		mapper.StatusRange(500, 599, mapper.Permanent("miss")),
		mapper.Is(errSentinel, mapper.TransientIfIdempotent("hit")),
	)
	m := mapper.New().With(rules...)
	wrapped3 := fmt.Errorf("c: %w", fmt.Errorf("b: %w", fmt.Errorf("a: %w", errSentinel)))
	typed := fmt.Errorf("c: %w", taxonomy.Transient("supplier_unavailable", "down"))
	status := fmt.Errorf("quote: %w", &statusErr{code: 503, err: errOther})
	unmapped := fmt.Errorf("c: %w", errors.New("boom"))

	bench := func(name string, m *mapper.Map, err error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if m.ClassifyFor("quote", true, err) == nil {
					b.Fatal("nil")
				}
			}
		})
	}
	bench("typed", m, typed)
	bench("wrapped3_rules20", m, wrapped3)
	bench("default_status", mapper.Default(), status)
	bench("default_unmapped", mapper.Default(), unmapped)
}
