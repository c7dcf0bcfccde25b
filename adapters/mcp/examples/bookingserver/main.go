// Command bookingserver publishes the booking tools (search_flights,
// book_flight, cancel_booking) over MCP, each behind toolmw's default
// stack: typed errors as isError results with ForModel's envelope, panics
// recovered, arguments checked, nothing untyped on the wire.
//
//	go run ./examples/bookingserver                       # stdio
//	go run ./examples/bookingserver -http 127.0.0.1:8080  # streamable HTTP at /mcp
//
// Logs go to stderr (on stdio, stdout is the protocol).
package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/adapters/mcp/internal/booking"
	"github.com/toolmw/toolmw/middleware"
)

func main() {
	addr := flag.String("http", "", "serve streamable HTTP on this address (path /mcp) instead of stdio")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, logger); err != nil {
		logger.Error("bookingserver stopped", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string, logger *slog.Logger) error {
	srv, err := newServer(logger)
	if err != nil {
		return err
	}
	if addr == "" {
		return srv.Run(ctx, &sdk.StdioTransport{})
	}
	hs := &http.Server{Addr: addr, Handler: handler(srv), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
	}()
	logger.Info("serving MCP over streamable HTTP", "url", "http://"+addr+"/mcp")
	if err := hs.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// newServer is the MCP server of a new booking desk, its tools behind the
// default stack logging to logger.
func newServer(logger *slog.Logger) (*sdk.Server, error) {
	return booking.NewServer(booking.NewDesk(), middleware.Default(middleware.WithSlog(logger)).Middleware())
}

// handler serves srv over streamable HTTP at /mcp.
func handler(srv *sdk.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	return mux
}
