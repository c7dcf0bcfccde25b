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
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server replays a script of replies. It is safe for concurrent use.
type Server struct {
	path string

	mu       sync.Mutex
	script   [][]byte
	requests [][]byte
}

// New returns a Server answering POST requests to path (such as
// "/v1/messages") with replies, one per request, in order. A
// request past the end of the script, or to another path, gets an error
// in the API's shape (HTTP 400, which the SDK does not retry).
func New(path string, replies ...[]byte) *Server {
	return &Server{path: path, script: replies}
}

// Requests returns the bodies of the requests received so far, in order.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.requests...)
}

// ServeHTTP records the request and answers with the next reply.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		apiError(w, http.StatusBadRequest, "replay: the request body could not be read")
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != s.path {
		apiError(w, http.StatusNotFound, "replay: only POST "+s.path+" is recorded")
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, body)
	var reply []byte
	if n < len(s.script) {
		reply = s.script[n]
	}
	s.mu.Unlock()
	if reply == nil {
		apiError(w, http.StatusBadRequest, "replay: the script has no more replies")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_011CReplay")
	w.Header().Set("Anthropic-Organization-Id", "00000000-0000-4000-8000-000000000000")
	_, _ = w.Write(reply)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{
		"type": "invalid_request_error", "message": msg,
	}, "request_id": "req_011CReplay"})
}

// Listen serves h on a free port of 127.0.0.1 and returns its base URL
// (http://127.0.0.1:port) and a function that shuts it down.
func Listen(h http.Handler) (url string, shutdown func() error, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() error {
		err := srv.Close()
		if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
		return err
	}, nil
}
