//lint:file-ignore SA1019 MCP 2025-11-25 logging and sampling, which the SDK deprecates from protocol 2026-07-28 on, are what a tool's Session sends to a client on the earlier versions

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// roundTripVersion is the first protocol version (2026-07-28) in which a
// server may no longer send requests of its own (elicitation, sampling)
// while it serves one: the SDK refuses them on such a session.
const roundTripVersion = "2026-07-28"

// defaultMaxTokens is the maxTokens of a sampling request that sets none:
// MCP requires the field.
const defaultMaxTokens = 1024

// emptyElicitSchema is the requested schema of a question without one: MCP
// form mode requires an object schema.
var emptyElicitSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// session is the toolmw.Session of one tools/call: what the tool may do
// through the client's session, tied to the request's progress token.
type session struct {
	ss    *sdk.ServerSession
	token any // the request's progress token; nil when the client sent none
}

// withSession returns ctx carrying the Session of req, when req came
// through a session.
func withSession(ctx context.Context, req *sdk.CallToolRequest) context.Context {
	if req == nil || req.Session == nil {
		return ctx
	}
	s := &session{ss: req.Session}
	if req.Params != nil {
		s.token = req.Params.GetProgressToken()
	}
	return toolmw.WithSession(ctx, s)
}

// Progress sends a progress notification for the call, or nothing when the
// client asked for none (no progress token).
func (s *session) Progress(ctx context.Context, p toolmw.Progress) error {
	if s.token == nil {
		return nil
	}
	return s.ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
		ProgressToken: s.token,
		Progress:      p.Progress,
		Total:         p.Total,
		Message:       p.Message,
	})
}

// Log sends a logging notification; the SDK drops it below the level the
// client set (all of them until it sets one). A level MCP does not define
// is sent as "info".
func (s *session) Log(ctx context.Context, l toolmw.LogLine) error {
	level := sdk.LoggingLevel(l.Level)
	switch level {
	case "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency":
	default:
		level = "info"
	}
	return s.ss.Log(ctx, &sdk.LoggingMessageParams{
		Level:  level,
		Logger: l.Logger,
		Data:   l.Data,
	})
}

// Elicit asks the client's user q in form mode.
func (s *session) Elicit(ctx context.Context, q toolmw.Elicitation) (toolmw.ElicitResult, error) {
	if err := s.canAsk("elicitation", func(c *sdk.ClientCapabilities) bool { return c.Elicitation != nil }); err != nil {
		return toolmw.ElicitResult{}, err
	}
	schema := q.Schema
	if len(schema) == 0 {
		schema = emptyElicitSchema
	}
	res, err := s.ss.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: q.Message, RequestedSchema: schema})
	if err != nil {
		return toolmw.ElicitResult{}, askFailed(ctx, "elicitation", err)
	}
	return toolmw.ElicitResult{Action: res.Action, Content: res.Content}, nil
}

// Sample asks the client's model for a completion of r's text messages.
func (s *session) Sample(ctx context.Context, r toolmw.SampleRequest) (toolmw.SampleResult, error) {
	if err := s.canAsk("sampling", func(c *sdk.ClientCapabilities) bool { return c.Sampling != nil }); err != nil {
		return toolmw.SampleResult{}, err
	}
	params := &sdk.CreateMessageParams{
		Messages:     make([]*sdk.SamplingMessage, 0, len(r.Messages)),
		SystemPrompt: r.SystemPrompt,
		MaxTokens:    int64(r.MaxTokens),
	}
	if params.MaxTokens <= 0 {
		params.MaxTokens = defaultMaxTokens
	}
	for _, m := range r.Messages {
		params.Messages = append(params.Messages, &sdk.SamplingMessage{
			Role: sdk.Role(m.Role), Content: &sdk.TextContent{Text: m.Text},
		})
	}
	res, err := s.ss.CreateMessage(ctx, params)
	if err != nil {
		return toolmw.SampleResult{}, askFailed(ctx, "sampling", err)
	}
	out := toolmw.SampleResult{Role: string(res.Role), Model: res.Model, StopReason: res.StopReason}
	if tc, ok := res.Content.(*sdk.TextContent); ok {
		out.Text = tc.Text
	}
	return out, nil
}

// canAsk returns nil when the client declared the capability what needs
// (has) and the protocol lets a server ask during a call, else an error
// wrapping toolmw.ErrSessionUnsupported.
func (s *session) canAsk(what string, has func(*sdk.ClientCapabilities) bool) error {
	p := s.ss.InitializeParams()
	switch {
	case p != nil && p.ProtocolVersion >= roundTripVersion:
		return fmt.Errorf("mcp: from protocol %s on, a server may not ask for %s during a call: %w",
			roundTripVersion, what, toolmw.ErrSessionUnsupported)
	case p == nil || p.Capabilities == nil || !has(p.Capabilities):
		return fmt.Errorf("mcp: the client did not declare the %s capability: %w", what, toolmw.ErrSessionUnsupported)
	}
	return nil
}

// errAskFailed is the error of a question the client did not answer: the
// request failed on the way or the client returned an error.
var errAskFailed = taxonomy.Failure(taxonomy.CodeUpstreamError, "the MCP client did not answer the request")

// askFailed types the error of a request to the client: the call's own
// cancellation or deadline as it is, anything else as upstream_error
// wrapping it (its text, the client's, is not shown).
func askFailed(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	return errAskFailed.WithMessage("the MCP client did not answer the " + what + " request").WithCause(err)
}
