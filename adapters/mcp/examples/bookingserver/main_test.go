package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStreamableHTTP serves the booking tools over streamable HTTP on
// 127.0.0.1 and calls them with a go-sdk client.
func TestStreamableHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := newServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(handler(srv))
	defer hs.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1.0.0"}, nil).Connect(ctx,
		&sdk.StreamableClientTransport{Endpoint: hs.URL + "/mcp", HTTPClient: &http.Client{Transport: tr}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.Name == "search_flights" && (!tool.Annotations.ReadOnlyHint || !tool.Annotations.IdempotentHint) {
			t.Errorf("search_flights' annotations %+v", tool.Annotations)
		}
	}
	if strings.Join(names, ",") != "book_flight,cancel_booking,search_flights" {
		t.Fatalf("tools %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "book_flight", Arguments: map[string]any{"flight": "TP1236", "passenger": "Ada"}})
	if err != nil || res.IsError {
		t.Fatalf("book: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "cancel_booking", Arguments: map[string]any{"reference": "BK0001"}})
	if err != nil || !res.IsError {
		t.Fatalf("cancel: %v %+v", err, res)
	}
	meta, _ := json.Marshal(res.Meta)
	if !strings.Contains(string(meta), `"code":"booking_not_cancellable"`) {
		t.Fatalf("cancel's _meta %s", meta)
	}
}
