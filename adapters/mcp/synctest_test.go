package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/middleware/breaker"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestFakeTime runs the time-bound cases in memory under testing/synctest,
// with the durations of production (a 30-second timeout, a breaker open
// for a minute) on a fake clock: the hanging server times out after
// exactly 30 s, the dead server's breaker fails calls fast for its open
// minute, and the first call after it reconnects.
func TestFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		ts := newTools()
		box := toolmw.NewToolbox(middleware.Default().Middleware())
		for _, s := range ts.list() {
			if err := box.Register(s.spec, s.tool); err != nil {
				t.Fatal(err)
			}
		}
		srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1.0.0"}, nil)
		if err := toolmcp.AddToolbox(srv, box); err != nil {
			t.Fatal(err)
		}
		var sessions []*sdk.ServerSession
		down := false // the server is down: it accepts no session
		client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, nil)
		dial := func(ctx context.Context) (*sdk.ClientSession, error) {
			if down {
				return nil, errors.New("connection refused")
			}
			ct, st := sdk.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				return nil, err
			}
			sessions = append(sessions, ss)
			return client.Connect(ctx, ct, nil)
		}
		cs, err := dial(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		remote, err := toolmcp.NewRemote(ctx, cs, toolmcp.WithReconnect(dial))
		if err != nil {
			t.Fatal(err)
		}
		defer remote.Close()
		perServer := breaker.NewBreaker("test", breaker.WithConsecutiveFailures(3), breaker.WithOpenFor(time.Minute))
		clientStack := middleware.Default(middleware.WithBreaker(breaker.WithShared(perServer)))
		tools, err := remote.Toolbox(clientStack.Middleware())
		if err != nil {
			t.Fatal(err)
		}
		call := func(name string) error {
			ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			_, err := tools.Call(ctx, name, json.RawMessage(`{}`))
			return err
		}

		// The server hangs: the call times out after the default 30 s.
		start := time.Now()
		err = call("slow")
		if info := taxonomy.InfoOf(err); info.Kind != taxonomy.KindTimeout || info.Code != taxonomy.CodeTimeout {
			t.Fatalf("got %v", err)
		}
		if d := time.Since(start); d != middleware.DefaultTimeout {
			t.Fatalf("timed out after %v", d)
		}
		<-ts.cancelled // the server's call was cancelled too

		// The server dies: the breaker opens, and stays open for a minute.
		down = true
		for _, ss := range sessions {
			ss.Close()
		}
		_ = call("echo")
		if perServer.State() != breaker.StateOpen {
			t.Fatalf("breaker %v", perServer.State())
		}
		time.Sleep(59 * time.Second)
		start = time.Now()
		if err := call("echo"); taxonomy.InfoOf(err).Kind != taxonomy.KindCircuitOpen || time.Since(start) != 0 {
			t.Fatalf("got %v after %v", err, time.Since(start))
		}
		// The server is back; after the open minute the probe reconnects.
		down = false
		time.Sleep(2 * time.Second)
		if err := call("echo"); err != nil {
			t.Fatalf("after the open period: %v", err)
		}
		if perServer.State() != breaker.StateClosed {
			t.Fatalf("breaker %v", perServer.State())
		}
		for _, ss := range sessions {
			ss.Close()
		}
	})
}

// TestReconnectOnce: calls that find the session closed share one dial;
// when the call that dials is cancelled, the others are not: they fail
// as upstream_unavailable, retryable, and the next call dials again.
func TestReconnectOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		srv := newServer()
		if err := toolmcp.AddTool(srv, toolmw.Spec{Name: "ping"}, func(context.Context, json.RawMessage) (toolmw.Result, error) {
			return toolmw.Text("pong"), nil
		}); err != nil {
			t.Fatal(err)
		}
		client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, nil)
		var sessions []*sdk.ServerSession
		var clients []*sdk.ClientSession
		connect := func(ctx context.Context) (*sdk.ClientSession, error) {
			ct, st := sdk.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				return nil, err
			}
			sessions = append(sessions, ss)
			cs, err := client.Connect(ctx, ct, nil)
			clients = append(clients, cs)
			return cs, err
		}
		gate := make(chan struct{})
		dials := 0
		dial := func(ctx context.Context) (*sdk.ClientSession, error) {
			dials++
			select {
			case <-gate:
				return connect(ctx)
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		cs, err := connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		remote, err := toolmcp.NewRemote(ctx, cs, toolmcp.WithReconnect(dial))
		if err != nil {
			t.Fatal(err)
		}
		box, err := remote.Toolbox()
		if err != nil {
			t.Fatal(err)
		}
		call := func(ctx context.Context) error {
			_, err := box.Call(ctx, "ping", nil)
			return err
		}
		cs.Close()
		if err := call(ctx); taxonomy.InfoOf(err).Code != taxonomy.CodeUpstreamUnavailable {
			t.Fatalf("the call that found the session closed: %v", err)
		}

		// The dialing call is cancelled; the one waiting for it is not.
		dialer, cancel := context.WithCancel(ctx)
		errs := make(chan error, 5)
		go func() { errs <- call(dialer) }()
		synctest.Wait()
		go func() { errs <- call(ctx) }()
		synctest.Wait()
		cancel()
		got := []error{<-errs, <-errs}
		if !errors.Is(got[0], context.Canceled) && !errors.Is(got[1], context.Canceled) {
			t.Fatalf("the dialing call: %v", got)
		}
		if taxonomy.InfoOf(got[0]).Code != taxonomy.CodeUpstreamUnavailable && taxonomy.InfoOf(got[1]).Code != taxonomy.CodeUpstreamUnavailable {
			t.Fatalf("the waiting call: %v", got)
		}

		// Five calls at once share the next dial.
		for range 5 {
			go func() { errs <- call(ctx) }()
		}
		synctest.Wait()
		close(gate)
		for range 5 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if dials != 2 {
			t.Fatalf("%d dials, want 2", dials)
		}
		if err := remote.Close(); err != nil {
			t.Fatal(err)
		}
		for _, ss := range sessions {
			ss.Close()
		}
		for _, c := range clients {
			c.Close()
		}
	})
}
