package toolmw_test

import (
	"context"
	"errors"
	"testing"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

type fakeSession struct{ got []any }

func (s *fakeSession) Progress(_ context.Context, p toolmw.Progress) error {
	s.got = append(s.got, p)
	return nil
}
func (s *fakeSession) Log(_ context.Context, l toolmw.LogLine) error {
	s.got = append(s.got, l)
	return nil
}
func (s *fakeSession) Elicit(_ context.Context, q toolmw.Elicitation) (toolmw.ElicitResult, error) {
	s.got = append(s.got, q)
	return toolmw.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
}
func (s *fakeSession) Sample(_ context.Context, r toolmw.SampleRequest) (toolmw.SampleResult, error) {
	s.got = append(s.got, r)
	return toolmw.SampleResult{Role: "assistant", Text: "hi"}, nil
}

// Without a Session, progress and log lines go nowhere and questions are
// session_unsupported; with one, each reaches it.
func TestSession(t *testing.T) {
	ctx := context.Background()
	if err := toolmw.ReportProgress(ctx, 1, 2, "half"); err != nil {
		t.Errorf("ReportProgress without a session: %v", err)
	}
	if err := toolmw.LogToClient(ctx, "info", "x"); err != nil {
		t.Errorf("LogToClient without a session: %v", err)
	}
	_, err := toolmw.Elicit(ctx, toolmw.Elicitation{Message: "sure?"})
	if !errors.Is(err, toolmw.ErrSessionUnsupported) || taxonomy.InfoOf(err).Code != taxonomy.CodeSessionUnsupported || taxonomy.InfoOf(err).Retryable {
		t.Errorf("Elicit without a session: %v", err)
	}
	if _, err := toolmw.Sample(ctx, toolmw.SampleRequest{}); !errors.Is(err, toolmw.ErrSessionUnsupported) {
		t.Errorf("Sample without a session: %v", err)
	}

	s := &fakeSession{}
	ctx = toolmw.WithSession(ctx, s)
	_ = toolmw.ReportProgress(ctx, 1, 2, "half")
	_ = toolmw.LogToClient(ctx, "info", "x")
	if r, err := toolmw.Elicit(ctx, toolmw.Elicitation{Message: "sure?"}); err != nil || r.Action != "accept" {
		t.Errorf("Elicit = %v, %v", r, err)
	}
	if r, err := toolmw.Sample(ctx, toolmw.SampleRequest{MaxTokens: 5}); err != nil || r.Text != "hi" {
		t.Errorf("Sample = %v, %v", r, err)
	}
	if len(s.got) != 4 || s.got[0].(toolmw.Progress).Total != 2 || s.got[1].(toolmw.LogLine).Level != "info" {
		t.Errorf("the session got %v", s.got)
	}
}
