package bench

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/failsafe-go/failsafe-go"
	fsfallback "github.com/failsafe-go/failsafe-go/fallback"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/fallback"
	"github.com/toolmw/toolmw/taxonomy"
)

// The fallback layer alone against failsafe-go's fallback policy, on one
// tool, on its two paths: the success path (the tool answers; toolmw's
// last-good mode also remembers the answer, which costs canonicalising
// and hashing the arguments) and the fallback path (the circuit is open;
// the caller gets the substitute, which toolmw marks in the content).
// failsafe-go has no last-good mode: its fallback is a fixed result or a
// function, compared with toolmw's WithFunc.

// errOpen is the failure of the fallback path.
var errOpen = taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "the circuit is open").WithRetryable(true)

var noData = toolmw.Result{Content: "no data"}

// flaky is a tool that succeeds until down is set, then fails with errOpen.
func flaky(down *atomic.Bool) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		if down.Load() {
			return toolmw.Result{}, errOpen
		}
		return noop(ctx, args)
	}
}

// fallbackSystems returns the systems for one path: each makes its tool
// from the dependency, which it may call once to warm up (the last good
// result) before the path's state is set.
func fallbackSystems() []struct {
	name string
	make func(dep toolmw.Tool) toolmw.Tool
} {
	substitute := func(context.Context, toolmw.Call, json.RawMessage, error) (toolmw.Result, error) { return noData, nil }
	return []struct {
		name string
		make func(dep toolmw.Tool) toolmw.Tool
	}{
		{"toolmw_wrap_only", func(dep toolmw.Tool) toolmw.Tool { return toolmw.MustWrap(spec, dep) }},
		{"toolmw_fallback_func", func(dep toolmw.Tool) toolmw.Tool {
			return toolmw.MustWrap(spec, dep, fallback.New(fallback.WithFunc(substitute)))
		}},
		{"toolmw_fallback_last_good", func(dep toolmw.Tool) toolmw.Tool {
			return toolmw.MustWrap(spec, dep, fallback.New(fallback.WithLastGood(0), fallback.WithSharedResults())) // spec is idempotent
		}},
		{"failsafe_fallback_func", func(dep toolmw.Tool) toolmw.Tool {
			fb := fsfallback.NewBuilderWithFunc(func(failsafe.Execution[toolmw.Result]) (toolmw.Result, error) { return noData, nil }).
				HandleIf(func(_ toolmw.Result, err error) bool { return errors.Is(err, taxonomy.ErrCircuitOpen) }).
				Build()
			exec := failsafe.With[toolmw.Result](fb)
			return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
				return exec.WithContext(ctx).GetWithExecution(func(e failsafe.Execution[toolmw.Result]) (toolmw.Result, error) {
					return dep(e.Context(), args)
				})
			}
		}},
	}
}

// BenchmarkFallback runs each system on the success path and on the
// fallback path. toolmw_wrap_only is the floor (toolmw.Wrap and no layer)
// and on the fallback path returns the error, substituting nothing.
func BenchmarkFallback(b *testing.B) {
	for _, path := range []string{"success", "fallback"} {
		for _, s := range fallbackSystems() {
			b.Run(path+"/"+s.name, func(b *testing.B) {
				var down atomic.Bool
				tool := s.make(flaky(&down))
				ctx := context.Background()
				if _, err := tool(ctx, benchArgs); err != nil { // warm up: the last good result
					b.Fatal(err)
				}
				down.Store(path == "fallback")
				b.ReportAllocs()
				for b.Loop() {
					res, err := tool(ctx, benchArgs)
					if err != nil && s.name != "toolmw_wrap_only" {
						b.Fatal(err)
					}
					sink = res
				}
			})
		}
	}
}
