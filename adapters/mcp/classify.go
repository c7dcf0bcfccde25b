package mcp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/mapper"
	"github.com/toolmw/toolmw/taxonomy"
)

// The JSON-RPC codes the go-sdk uses beyond the standard ones.
const (
	codeClientClosing = -32003 // the local connection is closing
	codeServerClosing = -32004 // the server is closing
	codeRejected      = -32005 // the transport did not deliver the request
)

// defaultMap classifies a Remote's errors unless WithMapper says otherwise.
var defaultMap = mapper.Default().With(Rules()...)

// Rules returns the mapper rules for the errors of the go-sdk client, to
// add to a map of your own ([WithMapper]):
//
//	error                                          kind / code                           retryable
//	mcp.ErrConnectionClosed (nothing was sent)     tool-failed / upstream_unavailable    yes
//	mcp.ErrSessionMissing (the server forgot it)   tool-failed / upstream_unavailable    yes
//	JSON-RPC -32601 method not found               tool-not-found / tool_not_found       no
//	JSON-RPC -32602 naming an unknown tool         tool-not-found / tool_not_found       no
//	JSON-RPC -32602 otherwise (invalid params)     tool-args-invalid / args_invalid      no
//	JSON-RPC -32603 internal error                 tool-failed / upstream_error          if idempotent
//	JSON-RPC -32600, -32700 (malformed request)    tool-failed / upstream_bad_request    no
//	JSON-RPC -32004 (the server is closing)        tool-failed / upstream_unavailable    yes
//	any other JSON-RPC error from the server       tool-failed / upstream_error          if idempotent
//
// A request the SDK's transport rejected (-32005: HTTP 429 or 5xx, an
// undelivered request) is left to the rules for the errors it wraps (a
// refused connection is upstream_unavailable) and to the HTTP status, which
// a Remote reads (see [HTTPTransport]); one that nothing classifies is
// upstream_unavailable. Messages are fixed texts: the server's text never
// becomes one.
func Rules() []mapper.Rule {
	return []mapper.Rule{
		mapper.Is(sdk.ErrConnectionClosed, mapper.Transient(taxonomy.CodeUpstreamUnavailable).
			WithMessage("the session with the MCP server has closed")),
		mapper.Is(sdk.ErrSessionMissing, mapper.Transient(taxonomy.CodeUpstreamUnavailable).
			WithMessage("the MCP server no longer knows the session")),
		mapper.TypeFunc(jsonrpcVerdict),
	}
}

func jsonrpcVerdict(e *jsonrpc.Error) (mapper.Verdict, bool) {
	switch e.Code {
	case jsonrpc.CodeMethodNotFound:
		return mapper.NewVerdict(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, mapper.RetryNever).
			WithMessage("the MCP server does not offer the method"), true
	case jsonrpc.CodeInvalidParams:
		if namesUnknownTool(e.Message) {
			return mapper.NewVerdict(taxonomy.KindNotFound, taxonomy.CodeToolNotFound, mapper.RetryNever).
				WithMessage("the MCP server has no such tool"), true
		}
		return mapper.NewVerdict(taxonomy.KindArgsInvalid, taxonomy.CodeArgsInvalid, mapper.RetryNever).
			WithMessage("the MCP server rejected the arguments"), true
	case jsonrpc.CodeInternalError:
		return mapper.TransientIfIdempotent(taxonomy.CodeUpstreamError).
			WithMessage("the MCP server failed while handling the call"), true
	case jsonrpc.CodeInvalidRequest, jsonrpc.CodeParseError:
		return mapper.Permanent(taxonomy.CodeUpstreamBadRequest).
			WithMessage("the MCP server could not read the request"), true
	case codeServerClosing:
		return mapper.Transient(taxonomy.CodeUpstreamUnavailable).
			WithMessage("the MCP server is closing"), true
	case codeRejected, codeClientClosing:
		return mapper.Verdict{}, false // local: the errors it wraps decide
	}
	return mapper.TransientIfIdempotent(taxonomy.CodeUpstreamError).
		WithMessage("the MCP server answered with an error"), true
}

// namesUnknownTool reports whether an invalid-params message is the SDKs'
// answer to an unknown tool: go-sdk's "unknown tool", mcp-go's "tool 'x'
// not found".
func namesUnknownTool(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "unknown tool") || strings.Contains(m, "not found")
}

// rejected reports whether err holds the SDK's "rejected by transport".
func rejected(err error) bool {
	return errors.Is(err, &jsonrpc.Error{Code: codeRejected})
}

// statusOfText reads the HTTP status of a rejected request from the SDK's
// message, which ends in the status text of a 429 or a 5xx it did not
// otherwise report. HTTPTransport is the better source: it has the
// Retry-After too.
func statusOfText(err error) (int, bool) {
	if !rejected(err) {
		return 0, false
	}
	msg := err.Error()
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusBadGateway,
		http.StatusGatewayTimeout, http.StatusInternalServerError} {
		if strings.HasSuffix(msg, http.StatusText(code)) {
			return code, true
		}
	}
	return 0, false
}

// HTTPTransport returns an http.RoundTripper for the HTTP client of a
// streamable MCP client transport (mcp.StreamableClientTransport's
// HTTPClient): it passes every request to base (nil means
// http.DefaultTransport) and, for a tools/call a [Remote] makes, notes the
// status and Retry-After header of an answer of 400 or more. The SDK keeps
// only the status text of a 429 or a 5xx; with this the Remote classifies
// the call by the status, as the mapper's status rules say (429
// rate-limited and 503 upstream_unavailable, retryable after the server's
// Retry-After). It is safe for concurrent use.
//
//	transport := &mcp.StreamableClientTransport{
//		Endpoint:   url,
//		HTTPClient: &http.Client{Transport: toolmcp.HTTPTransport(nil)},
//	}
func HTTPTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &statusTransport{base: base}
}

type statusTransport struct{ base http.RoundTripper }

func (t *statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp != nil && resp.StatusCode >= 400 {
		if rec, ok := req.Context().Value(statusKey{}).(*status); ok {
			rec.set(resp.StatusCode, resp.Header)
		}
	}
	return resp, err
}

// status is the last failing HTTP status of one call's requests.
type status struct {
	mu         sync.Mutex
	code       int
	retryAfter string
}

type statusKey struct{}

func withStatus(ctx context.Context, s *status) context.Context {
	return context.WithValue(ctx, statusKey{}, s)
}

// maxRetryAfterLen bounds the Retry-After value kept.
const maxRetryAfterLen = 64

func (s *status) set(code int, h http.Header) {
	v := h.Get("Retry-After")
	if len(v) > maxRetryAfterLen {
		v = ""
	}
	s.mu.Lock()
	s.code, s.retryAfter = code, v
	s.mu.Unlock()
}

func (s *status) get() (int, http.Header, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.code == 0 {
		return 0, nil, false
	}
	var h http.Header
	if s.retryAfter != "" {
		h = http.Header{"Retry-After": []string{s.retryAfter}}
	}
	return s.code, h, true
}

// statusError puts the HTTP status of a failed call in front of the SDK's
// error, where the map's status rules read it.
type statusError struct {
	http *mapper.HTTPError
	err  error
}

func (e *statusError) Error() string   { return e.http.Error() }
func (e *statusError) Unwrap() []error { return []error{e.http, e.err} }

func httpError(code int, h http.Header) *mapper.HTTPError { return mapper.StatusError(code, h) }

func durationOf(s taxonomy.Seconds) time.Duration { return time.Duration(s) }
