// Command swaplayer varies the default stack one layer at a time: it
// replaces the breaker with a home-made one that trips per upstream host,
// removes the rate limiter, inserts a permission check, and prints the
// stack before and after. The other layers stay exactly as they were.
//
//	go run ./examples/swaplayer
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/permit"
	"github.com/toolmw/toolmw/taxonomy"
)

// hostBreaker is a deliberately small breaker of our own: after limit
// dependency faults in a row from any tool, it refuses every call for that
// upstream until reset. It shows that a layer is only a func(Tool) Tool.
type hostBreaker struct {
	limit int
	mu    sync.Mutex
	fails int
}

func (b *hostBreaker) Middleware(next toolmw.Tool) toolmw.Tool {
	return func(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
		b.mu.Lock()
		open := b.fails >= b.limit
		b.mu.Unlock()
		if open {
			return toolmw.Result{}, taxonomy.New(taxonomy.KindCircuitOpen, taxonomy.CodeCircuitOpen, "the upstream host is marked down")
		}
		res, err := next(ctx, args)
		b.mu.Lock()
		if info := taxonomy.InfoOf(err); err != nil && info.Kind == taxonomy.KindFailed {
			b.fails++
		} else if err == nil {
			b.fails = 0
		}
		b.mu.Unlock()
		return res, err
	}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "swaplayer:", err)
		os.Exit(1)
	}
}

func run() error {
	stack := middleware.Default()
	fmt.Println("before:", stack)

	shared := &hostBreaker{limit: 2} // one breaker for every tool behind the host
	stack, err := stack.Replace(middleware.Breaker, shared.Middleware)
	if err != nil {
		return err
	}
	if stack, err = stack.Remove(middleware.RateLimit); err != nil {
		return err
	}
	stack, err = stack.InsertBefore(middleware.Retry, middleware.Layer{
		Name:       "permit",
		Middleware: permit.New(permit.Deny("drop_tables")),
	})
	if err != nil {
		return err
	}
	fmt.Println("after: ", stack)

	down := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		return toolmw.Result{}, taxonomy.Failure("inventory_down", "the inventory host did not answer")
	}
	stock, err := stack.Wrap(toolmw.Spec{Name: "check_stock"}, down)
	if err != nil {
		return err
	}
	price, err := stack.Wrap(toolmw.Spec{Name: "check_price"}, down)
	if err != nil {
		return err
	}
	drop, err := stack.Wrap(toolmw.Spec{Name: "drop_tables"}, down)
	if err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		tool toolmw.Tool
	}{{"check_stock", stock}, {"check_price", price}, {"check_stock", stock}, {"drop_tables", drop}} {
		_, err := c.tool(context.Background(), nil)
		info := taxonomy.InfoOf(err)
		fmt.Printf("%-12s → %s/%s\n", c.name, info.Kind, info.Code)
	}
	return nil
}
