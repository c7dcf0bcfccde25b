package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// listingServer is the client's end of a fake MCP server that answers
// initialize and tools/list only, with results made in advance: what the
// client allocates is then its own work, not the server's.
type listingServer struct {
	// list returns the raw result of tools/list for a cursor.
	list func(cursor string) json.RawMessage
	// onList, when set, is called with each tools/list request's cursor.
	onList func(cursor string)
}

func (f *listingServer) Connect(context.Context) (sdk.Connection, error) {
	return &listingConn{f: f, out: make(chan jsonrpc.Message, 16), done: make(chan struct{})}, nil
}

type listingConn struct {
	f    *listingServer
	out  chan jsonrpc.Message
	once sync.Once
	done chan struct{}
}

func (c *listingConn) Write(_ context.Context, msg jsonrpc.Message) error {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.ID.IsValid() {
		return nil
	}
	resp := &jsonrpc.Response{ID: req.ID}
	switch req.Method {
	case "initialize":
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(req.Params, &p)
		resp.Result, _ = json.Marshal(map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "fake", "version": "1.0.0"},
		})
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(req.Params, &p)
		if c.f.onList != nil {
			c.f.onList(p.Cursor)
		}
		resp.Result = c.f.list(p.Cursor)
	default:
		resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
	}
	select {
	case c.out <- resp:
	case <-c.done:
		return io.EOF
	}
	return nil
}

func (c *listingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.out:
		return m, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *listingConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return nil
}

func (c *listingConn) SessionID() string { return "" }
