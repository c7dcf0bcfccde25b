// Package replay serves recorded Anthropic Messages API replies, so that
// the real SDK client can run an agent loop on a machine with no key and
// no network: the example program and the acceptance tests point the
// client at it with option.WithBaseURL.
//
// A [Server] answers each POST to its path with the next reply of its
// script and records the request bodies the SDK sent. The replies are
// built by [ToolUses] and [Answer] in the shapes the API returns (recorded
// from Messages API traffic, ids and usage made up).
package replay

import (
	"net/http"

	base "github.com/toolmw/toolmw/toolmwtest/replay"
)

// Server replays a script of replies and records the requests. It is safe
// for concurrent use.
type Server = base.Server

// dialect is how the API answers besides its replies.
var dialect = base.Dialect{
	Headers: map[string]string{"Request-Id": "req_011CReplay", "Anthropic-Organization-Id": "00000000-0000-4000-8000-000000000000"},
	Error: func(msg string) any {
		return map[string]any{"type": "error", "error": map[string]any{
			"type": "invalid_request_error", "message": msg,
		}, "request_id": "req_011CReplay"}
	},
}

// New returns a Server answering POST requests to path (such as
// "/v1/messages") with replies, one per request, in order. A request past
// the end of the script, or to another path, gets an error in the API's
// shape (HTTP 400 or 404, which the SDK does not retry).
func New(path string, replies ...[]byte) *Server {
	return base.New(path, dialect, replies...)
}

// Listen serves h on a free port of 127.0.0.1 and returns its base URL
// (http://127.0.0.1:port) and a function that shuts it down.
func Listen(h http.Handler) (url string, shutdown func() error, err error) {
	return base.Listen(h)
}
