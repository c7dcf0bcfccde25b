package toolmw

import (
	"context"
	"encoding/json"

	"github.com/toolmw/toolmw/taxonomy"
)

// A Session is what the connection carrying a call lets its tool do besides
// answering: report progress, write a log line to the client, ask the user
// a question (elicitation), ask the client's model for a completion
// (sampling). An adapter puts one in the call's context ([WithSession]) when
// its transport can do some of it — adapters/mcp does for an MCP client
// that declares the capabilities — and a tool reaches it through
// [ReportProgress], [LogToClient], [Elicit] and [Sample], never through an
// SDK's types. A Session must be safe for concurrent use.
type Session interface {
	// Progress reports how far the call is. An error is the transport's.
	Progress(ctx context.Context, p Progress) error
	// Log writes a log line to the client.
	Log(ctx context.Context, l LogLine) error
	// Elicit asks the user q and returns the answer. A transport that
	// cannot ask returns an error wrapping ErrSessionUnsupported.
	Elicit(ctx context.Context, q Elicitation) (ElicitResult, error)
	// Sample asks the client's model for a completion. A transport that
	// cannot ask returns an error wrapping ErrSessionUnsupported.
	Sample(ctx context.Context, r SampleRequest) (SampleResult, error)
}

// Progress is how far a call is: Progress of Total (0 when not known), and
// a message for the user.
type Progress struct {
	Progress, Total float64
	Message         string
}

// LogLine is a log line for the client: its level ("debug", "info",
// "notice", "warning", "error", "critical", "alert", "emergency"), the
// logger's name ("" for none), and its data (any JSON value).
type LogLine struct {
	Level  string
	Logger string
	Data   any
}

// Elicitation is a question for the user: a message, and the JSON Schema
// of the answer (an object of primitive properties, as MCP asks).
type Elicitation struct {
	Message string
	Schema  json.RawMessage
}

// ElicitResult is the user's answer: Action is "accept" (Content holds the
// answer), "decline" or "cancel".
type ElicitResult struct {
	Action  string
	Content map[string]any
}

// SampleRequest asks the client's model for a completion of Messages (each
// a role, "user" or "assistant", and its text), with an optional system
// prompt, at most MaxTokens tokens.
type SampleRequest struct {
	Messages     []SampleMessage
	SystemPrompt string
	MaxTokens    int
}

// SampleMessage is one message of a [SampleRequest].
type SampleMessage struct {
	Role, Text string
}

// SampleResult is the client model's completion: its text, the model that
// wrote it, and why it stopped ("" when not said).
type SampleResult struct {
	Role, Text, Model, StopReason string
}

// ErrSessionUnsupported is the error of [Elicit] and [Sample] when the
// call's transport cannot ask (no Session, or a client without the
// capability): tool-failed/session_unsupported, not retryable.
var ErrSessionUnsupported = taxonomy.Failure(taxonomy.CodeSessionUnsupported,
	"the client of this call cannot be asked this")

type sessionKey struct{}

// WithSession returns ctx carrying s, for the tool of the call ctx is for.
// Adapters call it; a layer may wrap the Session it finds (SessionFrom) to
// scrub or bound what goes through it.
func WithSession(ctx context.Context, s Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// SessionFrom returns the Session ctx carries.
func SessionFrom(ctx context.Context) (Session, bool) {
	s, ok := ctx.Value(sessionKey{}).(Session)
	return s, ok && s != nil
}

// ReportProgress reports how far the call ctx is for is, when its
// transport can: without a Session it does nothing and returns nil.
func ReportProgress(ctx context.Context, progress, total float64, message string) error {
	if s, ok := SessionFrom(ctx); ok {
		return s.Progress(ctx, Progress{Progress: progress, Total: total, Message: message})
	}
	return nil
}

// LogToClient writes a log line to the client of the call ctx is for, when
// its transport can: without a Session it does nothing and returns nil.
func LogToClient(ctx context.Context, level string, data any) error {
	if s, ok := SessionFrom(ctx); ok {
		return s.Log(ctx, LogLine{Level: level, Data: data})
	}
	return nil
}

// Elicit asks the user of the call ctx is for a question, through its
// transport; without a Session it returns [ErrSessionUnsupported].
func Elicit(ctx context.Context, q Elicitation) (ElicitResult, error) {
	if s, ok := SessionFrom(ctx); ok {
		return s.Elicit(ctx, q)
	}
	return ElicitResult{}, ErrSessionUnsupported
}

// Sample asks the client's model for a completion, through the transport
// of the call ctx is for; without a Session it returns
// [ErrSessionUnsupported].
func Sample(ctx context.Context, r SampleRequest) (SampleResult, error) {
	if s, ok := SessionFrom(ctx); ok {
		return s.Sample(ctx, r)
	}
	return SampleResult{}, ErrSessionUnsupported
}
