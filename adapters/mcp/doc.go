// Package mcp puts toolmw on both sides of the Model Context Protocol, with
// the official Go SDK (github.com/modelcontextprotocol/go-sdk/mcp). Its
// name is the SDK's: import it as toolmcp.
//
//	import (
//		"github.com/modelcontextprotocol/go-sdk/mcp"
//		toolmcp "github.com/toolmw/toolmw/adapters/mcp"
//	)
//
// # Serving toolmw tools
//
// [AddTool] and [AddToolbox] publish toolmw tools on an *mcp.Server: name,
// description, the input schema in the MCP profile of package schema, and
// annotations (idempotentHint from the Spec; title, read-only, destructive
// and open-world from [WithHints]). Each call runs through the tool's
// middlewares with the request's call id ([CallIDFromMeta]) and the
// request's context, so a client's cancellation cancels it, and with a
// toolmw.Session on the client's session: a tool reports progress, writes
// log lines, asks the user (elicitation) and asks the client's model
// (sampling) through toolmw.ReportProgress, LogToClient, Elicit and
// Sample, never through the SDK's types. A result's parts become content
// blocks — text, image, audio, embedded resources and resource links, with
// their annotations — with every text wrapped as untrusted data
// (toolmw.ForModelParts); a JSON object part is also structured content,
// and a tool's output schema is published as its outputSchema. Any error
// is an isError result, never a protocol error: ForModel's envelope as its
// only content, the error's taxonomy.Info in _meta under [MetaError], and
// the typed error for the server's own middleware
// (CallToolResult.GetError). A panic no layer recovered is tool_panicked.
// [ProtocolErrors] types the answers the SDK gives before a tool runs (an
// unknown tool).
//
//	srv := mcp.NewServer(&mcp.Implementation{Name: "booking", Version: "1.0.0"}, nil)
//	srv.AddReceivingMiddleware(toolmcp.ProtocolErrors())
//	err := toolmcp.AddTool(srv, toolmw.Spec{Name: "cancel_booking"}, toolmw.Typed(cancel),
//		middleware.Default().Middleware())
//
// # Calling the tools of an MCP server
//
// [NewRemote] lists the tools of a connected server and returns them as
// toolmw tools with specs ([Remote]): names made model-safe ([ModelName]),
// the server's input schema checked before arguments leave, idempotency
// from its hints. Register them in a toolmw.Toolbox behind a stack, and a
// remote tool runs through the same timeout, retry, breaker (one per
// server: breaker.WithShared), rate limit and tracing as a local one. The
// server's isError answer is the tool's own failure, typed and never
// retried, its text untrusted; protocol and transport errors are
// classified ([Rules], [HTTPTransport]); [WithReconnect] replaces a
// session that closed. A server's definitions are untrusted: what of them
// reaches the model is scrubbed, their digest is recorded ([Remote.Digest],
// [WithPin]) and a later listing that changes them is refused
// ([Remote.Verify], definitions_changed); the listing is bounded in tools,
// pages and, through [LimitTransport], bytes before it is decoded.
//
// A remote result keeps its parts: text, images and audio (bytes and MIME
// type), embedded resources and resource links (URI, name, MIME type), with
// their annotations, and structured content as a JSON part; a text-only
// result is text, as before. Every part is bounded before it is kept
// ([MaxRemotePartBytes], [MaxRemoteResultBytes], [MaxRemoteURILen]), MIME
// types and URIs are checked. A client made with [ClientOptions] relays
// what the server sends during a call to the caller's toolmw.Session:
// progress (a Remote sends a progress token with each call whose context
// carries a Session), log lines, elicitation and sampling requests.
//
//	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, toolmcp.ClientOptions(nil))
//	session, err := client.Connect(ctx, transport, nil)
//	remote, err := toolmcp.NewRemote(ctx, session, toolmcp.WithPrefix("booking_"))
//	box, err := remote.Toolbox(middleware.Default(
//		middleware.WithBreaker(breaker.WithShared(breaker.NewBreaker("booking"))),
//	).Middleware())
//	res, err := box.Call(toolmw.WithCallID(ctx, callID), "booking_cancel_booking", args)
//	text := toolmw.ForModel(res, err)
//
// Package mcpgo does the server side for mark3labs/mcp-go, as a tool
// handler middleware. The examples directory holds a booking server (stdio
// or streamable HTTP) and an agent-side client; conformance/server is the
// server the official MCP conformance suite tests, made of toolmw tools
// alone (scripts/mcp-conformance runs the suite).
//
// Everything exported here is safe for concurrent use, as each says.
package mcp
