// Package replay serves recorded model-API replies, so that a real SDK
// client can run an agent loop on a machine with no key and no network:
// the model-SDK adapters' examples and acceptance tests point their client
// at it. Each adapter's own replay package gives its API's [Dialect] and
// builds the replies in the API's recorded shapes.
//
// A [Server] answers each POST to its path with the next reply of its
// script and records the request bodies the SDK sent.
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

// Dialect is how an API answers besides its replies: the headers of a
// reply and the body of an error.
type Dialect struct {
	Headers map[string]string    // set on every reply
	Error   func(msg string) any // the error body, encoded as JSON
}

// Server replays a script of replies. It is safe for concurrent use.
type Server struct {
	path    string
	dialect Dialect

	mu       sync.Mutex
	script   [][]byte
	requests [][]byte
}

// New returns a Server answering POST requests to path (such as
// "/v1/chat/completions") with replies, one per request, in order. A
// request past the end of the script, or to another path, gets an error
// in the dialect's shape (HTTP 400 or 404, which SDKs do not retry).
func New(path string, d Dialect, replies ...[]byte) *Server {
	return &Server{path: path, dialect: d, script: replies}
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
		s.apiError(w, http.StatusBadRequest, "replay: the request body could not be read")
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != s.path {
		s.apiError(w, http.StatusNotFound, "replay: only POST "+s.path+" is recorded")
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
		s.apiError(w, http.StatusBadRequest, "replay: the script has no more replies")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	for k, v := range s.dialect.Headers {
		w.Header().Set(k, v)
	}
	_, _ = w.Write(reply)
}

func (s *Server) apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(s.dialect.Error(msg))
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
