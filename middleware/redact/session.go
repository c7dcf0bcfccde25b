package redact

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/scrub"
)

// session wraps the call's toolmw.Session: what the tool sends the client
// through it is scrubbed, always (like an error message, it goes from the
// tool out). What comes back (an answer, a completion) is the client's and
// is returned as it is.
type session struct {
	s    *scrub.Scrubber
	next toolmw.Session
}

// withSession returns ctx with its Session, if it carries one, wrapped to
// scrub what the tool sends through it.
func withSession(ctx context.Context, s *scrub.Scrubber) context.Context {
	next, ok := toolmw.SessionFrom(ctx)
	if !ok {
		return ctx
	}
	if w, ok := next.(session); ok && w.s == s {
		return ctx // already scrubbed so
	}
	return toolmw.WithSession(ctx, session{s: s, next: next})
}

// Progress scrubs the message.
func (w session) Progress(ctx context.Context, p toolmw.Progress) error {
	p.Message = w.s.String(p.Message)
	return w.next.Progress(ctx, p)
}

// Log scrubs the logger's name and the data: a string as text, any other
// value as JSON (scrubJSON), passed on as a json.RawMessage, or as a
// string of its scrubbed text when that is no longer JSON. Data that does
// not encode as JSON is not sent: the error says so.
func (w session) Log(ctx context.Context, l toolmw.LogLine) error {
	l.Logger = w.s.String(l.Logger)
	switch d := l.Data.(type) {
	case nil:
	case string:
		l.Data = w.s.String(d)
	default:
		b, ok := d.(json.RawMessage)
		if !ok {
			var err error
			if b, err = json.Marshal(d); err != nil {
				return fmt.Errorf("redact: the log line's data does not encode as JSON: %w", err)
			}
		}
		text, valid := scrubJSON(w.s, string(b))
		if valid {
			l.Data = json.RawMessage(text)
		} else {
			l.Data = text
		}
	}
	return w.next.Log(ctx, l)
}

// Elicit scrubs the question's message; the schema is the tool's form, as
// its definition is, and is sent as it is.
func (w session) Elicit(ctx context.Context, q toolmw.Elicitation) (toolmw.ElicitResult, error) {
	q.Message = w.s.String(q.Message)
	return w.next.Elicit(ctx, q)
}

// Sample scrubs the system prompt and the messages' text.
func (w session) Sample(ctx context.Context, r toolmw.SampleRequest) (toolmw.SampleResult, error) {
	r.SystemPrompt = w.s.String(r.SystemPrompt)
	if len(r.Messages) > 0 {
		msgs := make([]toolmw.SampleMessage, len(r.Messages))
		for i, m := range r.Messages {
			m.Text = w.s.String(m.Text)
			msgs[i] = m
		}
		r.Messages = msgs
	}
	return w.next.Sample(ctx, r)
}
