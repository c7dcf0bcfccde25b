package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/adapters/mcp/internal/wire"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// methodCallTool is the MCP method of a tool call.
const methodCallTool = "tools/call"

// ProtocolErrors returns a receiving middleware for an *mcp.Server
// (Server.AddReceivingMiddleware) that makes the protocol errors of
// tools/call typed. The SDK answers a call of an unknown tool with a
// JSON-RPC error quoting the name the client sent, and a raw handler's Go
// error with a JSON-RPC error carrying its text; behind this middleware
// every tools/call protocol error instead carries
//
//   - a message of the form "kind code: message" from [taxonomy.InfoOf]
//     (an untyped error's text withheld; an unknown tool named only when
//     its name is a valid toolmw name in which nothing looks like a
//     secret, even glued to a word: the name is the client's), and
//   - as its data, the error's [taxonomy.Info] record as JSON, which a
//     [Remote] turns back into the typed error.
//
// An unknown tool is tool-not-found (JSON-RPC -32602, as the SDK answers),
// other invalid params tool-args-invalid (-32602), and any other error
// keeps its JSON-RPC code, or -32603 when it had none. A cancellation
// passes through. Errors of other methods are left as they are.
//
// It types the errors of what it wraps, so install it outside any
// middleware that may fail tools/call with an error of its own (a
// server-wide rate limit returning a taxonomy rate-limited error with a
// Retry-After, say): first in the same AddReceivingMiddleware call, or in
// a later call (each call wraps what was there). It is safe for concurrent
// use.
func ProtocolErrors() sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if err == nil || method != methodCallTool || errors.Is(err, context.Canceled) {
				return res, err
			}
			// res may be a typed nil: never pass it on with an error.
			return nil, protocolError(req, err)
		}
	}
}

// protocolError is the typed JSON-RPC error of err, the failure of a
// tools/call request req.
func protocolError(req sdk.Request, err error) *jsonrpc.Error {
	code := int64(jsonrpc.CodeInternalError)
	var we *jsonrpc.Error
	typed := err
	if errors.As(err, &we) {
		if we.Code != 0 {
			code = we.Code
		}
		if _, ok := taxonomy.From(err); !ok && we.Code == jsonrpc.CodeInvalidParams {
			if strings.HasPrefix(we.Message, "unknown tool") {
				typed = notFound(toolName(req))
			} else {
				typed = taxonomy.ArgsInvalid()
			}
		}
	}
	info := taxonomy.InfoOf(typed)
	info.Message = scrub.String(info.Message)
	if info.Kind == taxonomy.KindNotFound || info.Kind == taxonomy.KindArgsInvalid {
		code = jsonrpc.CodeInvalidParams
	}
	msg := string(info.Kind) + " " + info.Code
	if info.Message != "" {
		msg += ": " + info.Message
	}
	data, jerr := json.Marshal(info)
	if jerr != nil {
		data = nil
	}
	return &jsonrpc.Error{Code: code, Message: msg, Data: data}
}

func toolName(req sdk.Request) string {
	if req == nil {
		return ""
	}
	if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && p != nil {
		return p.Name
	}
	return ""
}

// notFound names the requested tool only when its name is a valid toolmw
// name in which nothing looks like a secret (wire.SafeName): the name
// comes from the client, and goes back in the message and the record.
func notFound(name string) error {
	if !wire.SafeName(name) {
		return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool has the requested name")
	}
	return taxonomy.New(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, "no tool named "+name).WithTool(name)
}
