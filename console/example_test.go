package console_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"runtime"

	"github.com/toolmw/toolmw/console"
	"github.com/toolmw/toolmw/state"
)

// breakerOf stands for a layer instance: a breaker publishing its state.
type breakerOf struct{ tool string }

func ExampleWithState() {
	// The layers publish into state.Default; this example uses a registry
	// of its own, with one open breaker in it.
	reg := state.NewRegistry()
	b := &breakerOf{tool: "search_flights"}
	state.Register(reg, b, func(b *breakerOf, emit state.Emit) { emit(state.BreakerState, b.tool, "", 2) })

	srv := httptest.NewServer(console.New(console.WithState(console.WithRegistry(reg))))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/state.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	var view struct {
		Tools []struct{ Name, Breaker string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&view)
	for _, t := range view.Tools {
		fmt.Println(t.Name, t.Breaker)
	}
	runtime.KeepAlive(b)
	// Output: search_flights open
}
