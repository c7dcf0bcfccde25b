//lint:file-ignore SA1019 MCP deprecated logging and sampling (SEP-2577) in 2026-07-28; servers still send them, and they are relayed while the protocol versions that have them are spoken.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/adapters/mcp/internal/wire"
)

// ClientOptions returns a copy of opts (nil for none) for the go-sdk
// client whose sessions a [Remote] calls, with handlers that relay what
// the server sends during a remote call to the caller's
// [toolmw.Session] (the Session in the context of the call, as a toolmw
// server gives its tools; see [toolmw.WithSession]):
//
//   - progress notifications: a Remote sends a progress token with each
//     call whose context carries a Session, and the server's progress for
//     that token is reported with [toolmw.ReportProgress] in the call's
//     context, so a toolmw server that calls a remote tool relays the
//     progress to its own client;
//   - log messages ([toolmw.LogToClient]), elicitation requests
//     ([toolmw.Elicit]) and sampling requests ([toolmw.Sample]): MCP does
//     not say which call they belong to, so they are relayed only while a
//     single call is in flight on the session, to that call's Session.
//     Otherwise — no call, several, a call without a Session — a log
//     message is dropped, an elicitation is declined, and a sampling
//     request is refused with an error: what a server sends never reaches
//     the user of another call.
//
// The SDK hands notifications to these handlers on a goroutine of its own,
// not in step with results: a notification the server sent just before
// its result may be handled after the call returned, and is then dropped
// (one the server sent before a request of its own, an elicitation or a
// ping, is handled before that request).
//
// A handler already in opts (ProgressNotificationHandler,
// LoggingMessageHandler, ElicitationHandler, CreateMessageHandler) gets
// what no call takes. Setting the elicitation and sampling handlers makes
// the client declare both capabilities; a client with a
// CreateMessageWithToolsHandler keeps it, and sampling requests are not
// relayed.
//
// What the server sends is untrusted: a progress message, an elicitation
// message and the strings of a log line are scrubbed and cut to 1 KiB; a
// log line whose data is over 16 KiB of JSON is dropped; an elicitation in
// URL mode is declined; a sampling request with other than text messages is
// refused.
//
//	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, toolmcp.ClientOptions(nil))
func ClientOptions(opts *sdk.ClientOptions) *sdk.ClientOptions {
	o := &sdk.ClientOptions{}
	if opts != nil {
		*o = *opts
	}
	progress, logging, elicit, sample := o.ProgressNotificationHandler, o.LoggingMessageHandler, o.ElicitationHandler, o.CreateMessageHandler
	o.ProgressNotificationHandler = func(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
		if req == nil || req.Params == nil || !relayProgress(req.Session, req.Params) {
			if progress != nil {
				progress(ctx, req)
			}
		}
	}
	o.LoggingMessageHandler = func(ctx context.Context, req *sdk.LoggingMessageRequest) {
		if req == nil || req.Params == nil || !relayLog(req.Session, req.Params) {
			if logging != nil {
				logging(ctx, req)
			}
		}
	}
	o.ElicitationHandler = func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		if req != nil && req.Params != nil {
			if res, ok := relayElicit(req.Session, req.Params); ok {
				return res, nil
			}
		}
		if elicit != nil {
			return elicit(ctx, req)
		}
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	if o.CreateMessageWithToolsHandler == nil {
		o.CreateMessageHandler = func(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			if req != nil && req.Params != nil {
				if res, err, ok := relaySample(req.Session, req.Params); ok {
					return res, err
				}
			}
			if sample != nil {
				return sample(ctx, req)
			}
			return nil, errNoSampling
		}
	}
	return o
}

// errNoSampling answers a sampling request no call takes.
var errNoSampling = errors.New("toolmw: no call can take this sampling request")

// maxRelayJSON bounds a relayed log line's data and an elicitation's
// schema, as JSON.
const maxRelayJSON = 16 << 10

// inflight is a remote call in flight: its context, which may carry the
// caller's Session. mu is held (read) while something is relayed to it,
// and (write) by its end, so nothing is relayed after the call returned.
type inflight struct {
	ctx   context.Context
	token string // the progress token sent, or ""
	mu    sync.RWMutex
	done  bool
}

// sessionCalls are the calls in flight on one client session.
type sessionCalls struct {
	calls   map[*inflight]struct{}
	byToken map[string]*inflight
}

var (
	relayMu  sync.Mutex
	inFlight = map[*sdk.ClientSession]*sessionCalls{} // entries live while a call is in flight
	tokens   atomic.Uint64
)

// begin records a call on cs in ctx, with a progress token when ctx
// carries a Session (set in params). end must be called when the call
// returns.
func begin(ctx context.Context, cs *sdk.ClientSession, params *sdk.CallToolParams) *inflight {
	f := &inflight{ctx: ctx}
	if _, ok := toolmw.SessionFrom(ctx); ok {
		f.token = "toolmw-" + strconv.FormatUint(tokens.Add(1), 10)
		params.SetProgressToken(f.token)
	}
	relayMu.Lock()
	sc := inFlight[cs]
	if sc == nil {
		sc = &sessionCalls{calls: map[*inflight]struct{}{}, byToken: map[string]*inflight{}}
		inFlight[cs] = sc
	}
	sc.calls[f] = struct{}{}
	if f.token != "" {
		sc.byToken[f.token] = f
	}
	relayMu.Unlock()
	return f
}

// end records that the call f on cs returned.
func (f *inflight) end(cs *sdk.ClientSession) {
	relayMu.Lock()
	if sc := inFlight[cs]; sc != nil {
		delete(sc.calls, f)
		if f.token != "" {
			delete(sc.byToken, f.token)
		}
		if len(sc.calls) == 0 {
			delete(inFlight, cs)
		}
	}
	relayMu.Unlock()
	f.mu.Lock()
	f.done = true
	f.mu.Unlock()
}

// with runs fn with the call's context while the call is in flight, and
// reports whether it ran.
func (f *inflight) with(fn func(context.Context)) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.done {
		return false
	}
	fn(f.ctx)
	return true
}

// byToken returns the call on cs that sent token.
func byToken(cs *sdk.ClientSession, token any) *inflight {
	s, ok := token.(string)
	if !ok {
		return nil
	}
	relayMu.Lock()
	defer relayMu.Unlock()
	if sc := inFlight[cs]; sc != nil {
		return sc.byToken[s]
	}
	return nil
}

// sole returns the only call in flight on cs when it carries a Session.
func sole(cs *sdk.ClientSession) *inflight {
	relayMu.Lock()
	defer relayMu.Unlock()
	sc := inFlight[cs]
	if sc == nil || len(sc.calls) != 1 {
		return nil
	}
	for f := range sc.calls {
		if _, ok := toolmw.SessionFrom(f.ctx); ok {
			return f
		}
	}
	return nil
}

func relayProgress(cs *sdk.ClientSession, p *sdk.ProgressNotificationParams) bool {
	f := byToken(cs, p.ProgressToken)
	if f == nil {
		return false
	}
	return f.with(func(ctx context.Context) {
		_ = toolmw.ReportProgress(ctx, p.Progress, p.Total, wire.Untrusted(p.Message))
	})
}

func relayLog(cs *sdk.ClientSession, p *sdk.LoggingMessageParams) bool {
	f := sole(cs)
	if f == nil {
		return false
	}
	if b, err := json.Marshal(p.Data); err != nil || len(b) > maxRelayJSON {
		return true // taken, and dropped
	}
	return f.with(func(ctx context.Context) {
		s, _ := toolmw.SessionFrom(ctx)
		_ = s.Log(ctx, toolmw.LogLine{Level: string(p.Level), Logger: wire.Untrusted(p.Logger), Data: scrubValue(p.Data, 0)})
	})
}

func relayElicit(cs *sdk.ClientSession, p *sdk.ElicitParams) (*sdk.ElicitResult, bool) {
	f := sole(cs)
	if f == nil {
		return nil, false
	}
	res := &sdk.ElicitResult{Action: "decline"}
	if p.Mode != "" && p.Mode != "form" {
		return res, true
	}
	var schema json.RawMessage
	if p.RequestedSchema != nil {
		b, err := json.Marshal(p.RequestedSchema)
		if err != nil || len(b) > maxRelayJSON {
			return res, true
		}
		schema = b
	}
	ran := f.with(func(ctx context.Context) {
		ans, err := toolmw.Elicit(ctx, toolmw.Elicitation{Message: wire.Untrusted(p.Message), Schema: schema})
		if err == nil && (ans.Action == "accept" || ans.Action == "decline" || ans.Action == "cancel") {
			res = &sdk.ElicitResult{Action: ans.Action, Content: ans.Content}
		}
	})
	return res, ran
}

func relaySample(cs *sdk.ClientSession, p *sdk.CreateMessageParams) (*sdk.CreateMessageResult, error, bool) {
	f := sole(cs)
	if f == nil {
		return nil, nil, false
	}
	req := toolmw.SampleRequest{SystemPrompt: p.SystemPrompt, MaxTokens: int(min(max(p.MaxTokens, 0), 1<<30))}
	for _, m := range p.Messages {
		t, ok := m.Content.(*sdk.TextContent)
		if m == nil || !ok {
			return nil, errors.New("toolmw: only text sampling messages are relayed"), true
		}
		req.Messages = append(req.Messages, toolmw.SampleMessage{Role: string(m.Role), Text: t.Text})
	}
	var res *sdk.CreateMessageResult
	err := errNoSampling
	ran := f.with(func(ctx context.Context) {
		out, serr := toolmw.Sample(ctx, req)
		if serr != nil {
			err = errors.New("toolmw: the sampling request was not answered")
			return
		}
		role := sdk.Role(out.Role)
		if role == "" {
			role = "assistant"
		}
		res, err = &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: out.Text}, Model: out.Model, Role: role, StopReason: out.StopReason}, nil
	})
	return res, err, ran
}

// scrubValue is v, a decoded JSON value, with its strings (keys included)
// scrubbed and cut to 1 KiB; depth beyond 32 is dropped.
func scrubValue(v any, depth int) any {
	if depth > 32 {
		return nil
	}
	switch v := v.(type) {
	case string:
		return wire.Untrusted(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[wire.Untrusted(k)] = scrubValue(x, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = scrubValue(x, depth+1)
		}
		return out
	}
	return v
}
