package approval_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/middleware/approval"
	"github.com/toolmw/toolmw/taxonomy"
	"github.com/toolmw/toolmw/toolmwtest/canary"
)

// asker is a Session whose user answers every question with answer (or
// err), recording the questions.
type asker struct {
	answer toolmw.ElicitResult
	err    error
	asked  []toolmw.Elicitation
}

func (a *asker) Progress(context.Context, toolmw.Progress) error { return nil }
func (a *asker) Log(context.Context, toolmw.LogLine) error       { return nil }
func (a *asker) Elicit(_ context.Context, q toolmw.Elicitation) (toolmw.ElicitResult, error) {
	a.asked = append(a.asked, q)
	return a.answer, a.err
}
func (a *asker) Sample(context.Context, toolmw.SampleRequest) (toolmw.SampleResult, error) {
	return toolmw.SampleResult{}, toolmw.ErrSessionUnsupported
}

// TestElicitDecides: with WithElicit, a gated call with no decision asks
// the user through the call's session, with the scrubbed summary only; an
// approval runs the call at once, exactly once, a refusal or a decline
// denies it (and it stays denied), and a cancel, a transport that cannot
// ask, or no session leaves it pending as without the option.
func TestElicitDecides(t *testing.T) {
	secret := canary.Values()[0]
	args := `{"booking":"BK-1042","note":"` + secret + `"}`
	cases := []struct {
		name    string
		session toolmw.Session
		kind    taxonomy.Kind
		code    string
		runs    int32
	}{
		{"approved", &asker{answer: toolmw.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}}, "", "", 1},
		{"refused", &asker{answer: toolmw.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}}, taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, 0},
		{"declined", &asker{answer: toolmw.ElicitResult{Action: "decline"}}, taxonomy.KindApprovalDenied, taxonomy.CodeApprovalDenied, 0},
		{"cancelled", &asker{answer: toolmw.ElicitResult{Action: "cancel"}}, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, 0},
		{"cannot ask", &asker{err: toolmw.ErrSessionUnsupported}, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, 0},
		{"no session", nil, taxonomy.KindApprovalPending, taxonomy.CodeApprovalPending, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls := new(counter)
			desk := approval.NewDesk(approval.WithSealKey(key), approval.WithElicit(time.Hour))
			tool := toolmw.MustWrap(toolmw.Spec{Name: "cancel_booking"}, calls.tool, desk.Middleware(approval.Tools("cancel_booking")))
			ctx := runCtx("call_1")
			if c.session != nil {
				ctx = toolmw.WithSession(ctx, c.session)
			}
			for range 2 { // made again, the call gets the same answer and runs no more
				_, err := tool(ctx, json.RawMessage(args))
				if info := taxonomy.InfoOf(err); (err == nil) != (c.kind == "") || err != nil && (info.Kind != c.kind || info.Code != c.code) {
					t.Fatalf("the call ended in %v, want %s/%s", err, c.kind, c.code)
				}
				if c.runs == 1 {
					break // an approval is used once: the next call is approval_replayed
				}
			}
			if n := calls.n.Load(); n != c.runs {
				t.Errorf("the tool ran %d times, want %d", n, c.runs)
			}
			if a, ok := c.session.(*asker); ok {
				if len(a.asked) != 1 && c.name != "cannot ask" && c.name != "cancelled" {
					t.Errorf("asked %d times, want once", len(a.asked))
				}
				for _, q := range a.asked {
					if family, _ := canary.Find(q.Message); family != "" {
						t.Errorf("the question carries the planted %s: %q", family, q.Message)
					}
					if len(q.Schema) == 0 {
						t.Error("the question has no answer schema")
					}
				}
			}
		})
	}
	if err := approval.Validate(approval.WithElicit(0)); taxonomy.InfoOf(err).Code != taxonomy.CodeOptionInvalid {
		t.Errorf("WithElicit(0): %v, want option_invalid", err)
	}
}
