package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxListBytes is how many bytes of tools/list answers a listing
// may take, all its pages together, through [LimitTransport]: 8 MiB, room
// for [MaxTools] tools of 2 KiB each.
const DefaultMaxListBytes = 8 << 20

// codeListTooLarge is the JSON-RPC error code of the answer LimitTransport
// puts in place of a tools/list answer over its bound; a Remote reports it
// as tool_list_too_large. It is in the range JSON-RPC leaves to
// implementations.
const codeListTooLarge = -32090

// msgListTooLarge begins the message of that answer.
const msgListTooLarge = "toolmw: the tools/list answer is over "

const methodListTools = "tools/list"

// LimitTransport returns a transport that connects through t and bounds
// what a server's tool list may cost before the SDK decodes it: a listing,
// the answer to a tools/list request without a cursor and the pages after
// it, may hold at most maxBytes bytes of results (0 means
// [DefaultMaxListBytes]). The answer that would pass the bound is not
// decoded: the client gets a JSON-RPC error in its place, which
// [NewRemote] and [Remote.Verify] report as
// tool-definition-invalid/tool_list_too_large. Other messages pass as they
// are (the SDK bounds each message: 16 MiB by default).
//
// The bound holds whatever the transport: for a
// *mcp.StreamableClientTransport (streamable HTTP) the HTTP client's
// transport is wrapped, and a tools/list answer's body is read up to the
// bound, whether JSON or a stream of events; for any other transport
// (stdio, a command, in memory) each tools/list answer is measured as it
// arrives, before its result is decoded. Connect every session a Remote
// uses through it, the sessions WithReconnect dials included:
//
//	cs, err := client.Connect(ctx, toolmcp.LimitTransport(&mcp.CommandTransport{Command: cmd}, 0), nil)
//
// A negative maxBytes is invalid: the transport's Connect then fails with
// a tool-definition-invalid/option_invalid error. A nil t is likewise an
// option_invalid error of Connect. The transport is safe for concurrent
// use; concurrent listings on one session share one bound.
func LimitTransport(t sdk.Transport, maxBytes int) sdk.Transport {
	switch {
	case t == nil:
		return &limited{err: optionError("LimitTransport: the transport is nil")}
	case maxBytes < 0:
		return &limited{err: optionError("LimitTransport(%d): the bound must not be negative", maxBytes)}
	case maxBytes == 0:
		maxBytes = DefaultMaxListBytes
	}
	if st, ok := t.(*sdk.StreamableClientTransport); ok && st != nil {
		c := *st
		hc := &http.Client{}
		if st.HTTPClient != nil {
			*hc = *st.HTTPClient
		}
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		hc.Transport = &listLimitHTTP{base: base, listings: listings{max: maxBytes}}
		c.HTTPClient = hc
		return &c
	}
	return &limited{inner: t, max: maxBytes}
}

// listings are the tool listings in progress on one session: each, the
// answer to a tools/list request without a cursor and the pages its
// cursors lead to, has a budget of its own, so concurrent listings do not
// count against each other.
type listings struct {
	max      int
	mu       sync.Mutex
	byCursor map[string]*budget // the listing a cursor continues
}

// maxCursors bounds the cursors kept for listings that may go on; past it
// they are forgotten, and a page asked for with a forgotten cursor starts
// a budget of its own.
const maxCursors = 1024

// budget is what one listing has taken so far. It is guarded by the mu of
// its listings.
type budget struct {
	used  int // bytes of the listing's answers
	tools int // tools in the listing's answers
}

// begin returns the budget of the listing a tools/list request with params
// belongs to: the one its cursor continues, or a new one.
func (l *listings) begin(params json.RawMessage) *budget {
	c := cursorOf(params)
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.byCursor[c]; ok && c != "" {
		delete(l.byCursor, c)
		return b
	}
	return &budget{}
}

// take counts n more bytes of b's listing and reports whether it is still
// within the bound.
func (l *listings) take(b *budget, n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b.used += n
	return b.used <= l.max
}

// left returns how many more bytes b's listing may take.
func (l *listings) left(b *budget) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return max(l.max-b.used, 0)
}

// done counts the tools of an answer's result, without decoding it, and
// reports whether b's listing still holds at most MaxTools; when it does
// and the result names a next page, the page's cursor continues it.
func (l *listings) done(b *budget, result []byte) bool {
	n := arrayLen(member(result, "tools"))
	var next string
	if raw := member(result, "nextCursor"); len(raw) > 0 && len(raw) <= 4096 {
		_ = json.Unmarshal(raw, &next)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b.tools += n
	if b.tools > MaxTools {
		return false
	}
	if next != "" {
		if l.byCursor == nil || len(l.byCursor) >= maxCursors {
			l.byCursor = map[string]*budget{}
		}
		l.byCursor[next] = b
	}
	return true
}

// cursorOf returns the cursor of tools/list params, or "".
func cursorOf(params json.RawMessage) string {
	if len(params) == 0 || len(params) > 64<<10 {
		return ""
	}
	var p struct {
		Cursor string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Cursor
}

// tooLarge is the JSON-RPC error that stands in for an answer over the
// bound.
func tooLarge(maxBytes int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeListTooLarge, Message: msgListTooLarge + strconv.Itoa(maxBytes) + " bytes"}
}

// tooMany is the JSON-RPC error that stands in for an answer that takes a
// listing over MaxTools tools.
func tooMany() *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeListTooLarge, Message: msgTooManyTools + strconv.Itoa(MaxTools) + " tools"}
}

// msgTooManyTools begins the message of that answer.
const msgTooManyTools = "toolmw: the tools/list answers hold more than "

// isListTooLarge reports whether err is the error of an answer over the
// bytes bound (and not over the count).
func isListTooLarge(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == codeListTooLarge && strings.HasPrefix(we.Message, msgListTooLarge)
}

// isTooManyTools reports whether err is the error of an answer over the
// count.
func isTooManyTools(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == codeListTooLarge && strings.HasPrefix(we.Message, msgTooManyTools)
}

// limited is LimitTransport around a transport other than streamable
// HTTP.
type limited struct {
	inner sdk.Transport
	max   int
	err   error
}

func (l *limited) Connect(ctx context.Context) (sdk.Connection, error) {
	if l.err != nil {
		return nil, l.err
	}
	c, err := l.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &limitedConn{Connection: c, listings: listings{max: l.max}, waiting: map[jsonrpc.ID]*budget{}}, nil
}

// limitedConn measures the answers to the tools/list requests it sent.
type limitedConn struct {
	sdk.Connection
	listings
	wmu     sync.Mutex
	waiting map[jsonrpc.ID]*budget // tools/list requests awaiting their answer, and their listing's budget
}

func (c *limitedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == methodListTools && req.ID.IsValid() {
		b := c.begin(req.Params)
		c.wmu.Lock()
		c.waiting[req.ID] = b
		c.wmu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

func (c *limitedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	resp, ok := msg.(*jsonrpc.Response)
	if err != nil || !ok || !resp.ID.IsValid() {
		return msg, err
	}
	c.wmu.Lock()
	b := c.waiting[resp.ID]
	delete(c.waiting, resp.ID)
	c.wmu.Unlock()
	switch {
	case b == nil:
	case !c.take(b, len(resp.Result)):
		return &jsonrpc.Response{ID: resp.ID, Error: tooLarge(c.max)}, nil
	case resp.Error == nil && !c.done(b, resp.Result):
		return &jsonrpc.Response{ID: resp.ID, Error: tooMany()}, nil
	}
	return msg, nil
}

// listLimitHTTP is LimitTransport's HTTP transport for streamable HTTP: it
// reads the answer to a tools/list request up to what the listing may
// still take.
type listLimitHTTP struct {
	base http.RoundTripper
	listings
}

// maxRequestPeek bounds the request body read to find its method.
const maxRequestPeek = 64 << 10

func (t *listLimitHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.ContentLength > maxRequestPeek {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxRequestPeek+1))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	r2 := req.Clone(req.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r2.ContentLength = int64(len(body))
	var call struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if len(body) > maxRequestPeek || json.Unmarshal(body, &call) != nil || call.Method != methodListTools || len(call.ID) == 0 {
		return t.base.RoundTrip(r2)
	}
	b := t.begin(call.Params)
	resp, err := t.base.RoundTrip(r2)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	errBody := func(e *jsonrpc.Error) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`, call.ID, e.Code, e.Message)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &eventLimit{r: bufio.NewReaderSize(resp.Body, 4096), body: resp.Body, listings: &t.listings, budget: b,
			errEvent:  "event: message\ndata: " + errBody(tooLarge(t.max)) + "\n\n",
			manyEvent: "event: message\ndata: " + errBody(tooMany()) + "\n\n"}
		return resp, nil
	}
	// A JSON answer: read up to what is left, then either the answer or
	// the error in its place.
	left := t.left(b)
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(left)+1))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	switch {
	case len(data) > left || !t.take(b, len(data)):
		data = []byte(errBody(tooLarge(t.max)))
	case !t.done(b, member(data, "result")):
		data = []byte(errBody(tooMany()))
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// eventLimit passes a stream of server-sent events on while the listing is
// within its bound, event by event; at the event that would pass it, it
// ends the stream with an event carrying the error in the answer's place.
type eventLimit struct {
	r         *bufio.Reader
	body      io.Closer
	listings  *listings
	budget    *budget // the listing the answer belongs to
	errEvent  string  // the event in place of an answer over the bytes bound
	manyEvent string  // the event in place of an answer over MaxTools
	out       []byte  // what is ready to be read
	done      bool
}

func (e *eventLimit) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.done {
			return 0, io.EOF
		}
		e.next()
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

// next reads one event (up to a blank line) and makes it ready, or the
// error event when it passes the bound.
func (e *eventLimit) next() {
	var ev []byte
	for {
		line, err := e.r.ReadSlice('\n')
		if len(line) > 0 {
			if !e.listings.take(e.budget, len(line)) {
				e.out, e.done = []byte(e.errEvent), true
				return
			}
			ev = append(ev, line...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			e.out, e.done = ev, true
			return
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			if res := member(eventData(ev), "result"); res != nil && !e.listings.done(e.budget, res) {
				e.out, e.done = []byte(e.manyEvent), true
				return
			}
			e.out = ev
			return
		}
	}
}

// eventData returns the data of a server-sent event: its data lines
// joined by newlines.
func eventData(ev []byte) []byte {
	var data []byte
	for len(ev) > 0 {
		line := ev
		if i := bytes.IndexByte(ev, '\n'); i >= 0 {
			line, ev = ev[:i], ev[i+1:]
		} else {
			ev = nil
		}
		line = bytes.TrimRight(line, "\r")
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if data != nil {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	return data
}

// member returns the raw value of the member key of the JSON object doc,
// or nil: a scan without decoding, linear in len(doc).
func member(doc []byte, key string) []byte {
	i := ws(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil
	}
	i = ws(doc, i+1)
	for i < len(doc) && doc[i] == '"' {
		k := i
		i = skipValue(doc, i)
		if i < 0 {
			return nil
		}
		name := doc[k+1 : i-1]
		i = ws(doc, i)
		if i >= len(doc) || doc[i] != ':' {
			return nil
		}
		v := ws(doc, i+1)
		i = skipValue(doc, v)
		if i < 0 {
			return nil
		}
		if string(name) == key {
			return doc[v:i]
		}
		i = ws(doc, i)
		if i < len(doc) && doc[i] == ',' {
			i = ws(doc, i+1)
		}
	}
	return nil
}

// arrayLen returns how many elements the JSON array doc has (0 for
// anything else): a scan without decoding.
func arrayLen(doc []byte) int {
	i := ws(doc, 0)
	if i >= len(doc) || doc[i] != '[' {
		return 0
	}
	i = ws(doc, i+1)
	n := 0
	for i < len(doc) && doc[i] != ']' {
		if i = skipValue(doc, i); i < 0 {
			return n
		}
		n++
		if i = ws(doc, i); i < len(doc) && doc[i] == ',' {
			i = ws(doc, i+1)
		}
	}
	return n
}

func ws(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the JSON value at doc[i], or -1: it
// follows strings (and their escapes) and nesting, without recursion.
func skipValue(doc []byte, i int) int {
	depth := 0
	for i < len(doc) {
		switch doc[i] {
		case '"':
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
			if i >= len(doc) {
				return -1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a scalar in a container
			}
			depth--
		case ',', ':':
			if depth == 0 {
				return i
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
		if depth == 0 && (doc[i-1] == '"' || doc[i-1] == '}' || doc[i-1] == ']') {
			return i
		}
	}
	if depth == 0 {
		return i
	}
	return -1
}

func (e *eventLimit) Close() error { return e.body.Close() }
