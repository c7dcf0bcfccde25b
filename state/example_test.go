package state_test

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/toolmw/toolmw/state"
)

// pool is a layer instance: what it publishes is read at collection.
type pool struct {
	name    string
	running atomic.Int64
}

func Example() {
	r := state.NewRegistry()
	p := &pool{name: "search"}
	// The reader is given p at each collection; it must not keep p itself.
	state.Register(r, p, func(p *pool, emit state.Emit) {
		emit(state.BulkheadInFlight, p.name, "", float64(p.running.Load()))
	})
	p.running.Add(3)
	for _, s := range r.Collect() {
		fmt.Println(s.Name, s.Value)
	}
	runtime.KeepAlive(p)
	// Output: search 3
}
