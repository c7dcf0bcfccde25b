// Command bookingclient connects to the booking server, lists its tools
// and calls them as an agent would: through toolmw's default stack, with
// one circuit breaker for the server, printing what the model would be
// told for each call.
//
//	go run ./examples/bookingclient                                # the server in-process, in memory
//	go run ./examples/bookingclient -url http://127.0.0.1:8080/mcp # a server over streamable HTTP
//	go run ./examples/bookingclient -server ./bookingserver        # a server binary over stdio
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/adapters/mcp/internal/booking"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/taxonomy"
)

func main() {
	url := flag.String("url", "", "the server's streamable HTTP endpoint")
	command := flag.String("server", "", "a server binary to run over stdio")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := connectAndRun(ctx, *url, *command, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bookingclient:", err)
		os.Exit(1)
	}
}

func connectAndRun(ctx context.Context, url, command string, out io.Writer) error {
	var transport sdk.Transport
	switch {
	case url != "":
		transport = &sdk.StreamableClientTransport{
			Endpoint:   url,
			HTTPClient: &http.Client{Transport: toolmcp.HTTPTransport(nil)},
		}
	case command != "":
		transport = &sdk.CommandTransport{Command: exec.Command(command)}
	default:
		srv, err := booking.NewServer(booking.NewDesk(), middleware.Default().Middleware())
		if err != nil {
			return err
		}
		ct, st := sdk.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return err
		}
		defer ss.Close()
		transport = ct
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "bookingclient", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	return run(ctx, cs, out)
}

// run lists the server's tools and makes an agent's calls through the
// default stack.
func run(ctx context.Context, cs *sdk.ClientSession, out io.Writer) error {
	remote, err := toolmcp.NewRemote(ctx, cs, toolmcp.WithPrefix("booking_"))
	if err != nil {
		return err
	}
	perServer := breaker.NewBreaker("booking")
	stack := middleware.Default(
		middleware.WithTimeout(10*time.Second),
		middleware.WithBreaker(breaker.WithShared(perServer)),
		middleware.WithSlog(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	)
	box, err := remote.Toolbox(stack.Middleware())
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "tools:")
	for _, s := range remote.Specs() {
		mcpName, _ := remote.MCPName(s.Name)
		fmt.Fprintf(out, "  %-24s (MCP %s, idempotent %v) %s\n", s.Name, mcpName, s.Idempotent, s.Description)
	}
	fmt.Fprintln(out, "calls:")
	var reference string
	for i, c := range []struct {
		tool string
		args func() string
	}{
		{"booking_search_flights", func() string { return `{"from":"LIS","to":"AMS"}` }},
		{"booking_book_flight", func() string { return `{"flight":"TP1236","passenger":"Ada Lovelace"}` }},
		{"booking_cancel_booking", func() string { return `{"reference":"` + reference + `"}` }},
		{"booking_book_flight", func() string { return `{"flight":"TP1236"}` }},
		{"booking_rebook", func() string { return `{}` }},
	} {
		args := c.args()
		res, err := box.Call(toolmw.WithCallID(ctx, fmt.Sprintf("call_%d", i+1)), c.tool, json.RawMessage(args))
		var booked booking.Booking
		if err == nil && json.Unmarshal([]byte(res.Content), &booked) == nil && booked.Reference != "" {
			reference = booked.Reference
		}
		outcome := "ok"
		if err != nil {
			info := taxonomy.InfoOf(err)
			outcome = fmt.Sprintf("%s/%s retryable=%v", info.Kind, info.Code, info.Retryable)
		}
		fmt.Fprintf(out, "  %s %s\n    %s\n    model is told: %s\n", c.tool, args, outcome, toolmw.ForModel(res, err))
	}
	return nil
}
