package taxonomy

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// FieldError is one problem with a tool's arguments. It is JSON-safe and
// never holds the input value: Loc is a path of object keys (strings) and
// array indices (ints), such as ["items", 2, "qty"]; an empty Loc means the
// whole input.
type FieldError struct {
	Type string `json:"type"` // a snake_case category such as "missing" or "int_type"
	Loc  []any  `json:"loc"`  // the path to the offending value
	Msg  string `json:"msg"`  // a sentence for the model, without the input value
}

// UnmarshalJSON decodes a FieldError, turning integral numbers in Loc back
// into ints so a decoded record equals the one that was encoded.
func (f *FieldError) UnmarshalJSON(data []byte) error {
	var raw struct {
		Type string            `json:"type"`
		Loc  []json.RawMessage `json:"loc"`
		Msg  string            `json:"msg"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	f.Type, f.Msg, f.Loc = raw.Type, raw.Msg, make([]any, 0, len(raw.Loc))
	for _, r := range raw.Loc {
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			f.Loc = append(f.Loc, s)
			continue
		}
		var n int
		if err := json.Unmarshal(r, &n); err != nil {
			return errors.New("taxonomy: a loc element must be a string or an integer")
		}
		f.Loc = append(f.Loc, n)
	}
	return nil
}

// Info is a JSON-safe record of any error: what crosses a process boundary,
// goes into an event or is rendered as a problem document. Message holds only
// a typed error's own message (which its maker vouches for and layers scrub);
// the text of an untyped error is withheld.
type Info struct {
	Kind       Kind          `json:"kind"`
	Code       string        `json:"code"`
	Tool       string        `json:"tool,omitempty"`
	Retryable  bool          `json:"retryable"`
	Final      bool          `json:"final,omitempty"` // a retry layer has decided: ShouldRetry says no
	RetryAfter Seconds       `json:"retry_after,omitempty"`
	Message    string        `json:"message,omitempty"`
	Fields     []FieldError  `json:"errors,omitempty"`
	Approval   *ApprovalInfo `json:"approval,omitempty"`  // the approval request, for approval-pending and approval-denied
	Spend      *SpendInfo    `json:"spend,omitempty"`     // the run's spend, for budget-exceeded
	Guardrail  string        `json:"guardrail,omitempty"` // the guardrail's name, for guardrail-blocked
}

// ApprovalInfo names an approval request: the id a reviewer decides under
// and a summary of the call they can read (the tool and its scrubbed
// arguments, at most [MaxApprovalSummary] bytes).
type ApprovalInfo struct {
	ID      string `json:"id"`
	Summary string `json:"summary,omitempty"`
}

// The bounds of an approval record.
const (
	// MaxApprovalIDLen is the longest approval id a record carries, the
	// bound of a call id (toolmw.MaxCallIDLen).
	MaxApprovalIDLen = 128
	// MaxApprovalSummary is the longest summary a record carries, in bytes:
	// enough for a tool's name and a screenful of arguments, small enough
	// for a span, a log line or a notification.
	MaxApprovalSummary = 1024
)

// SpendInfo is what a run may spend, has spent and has left, in the unit
// its spend budget counts (a currency, tokens, credits).
type SpendInfo struct {
	Limit float64 `json:"limit"`
	Spent float64 `json:"spent"`
	Left  float64 `json:"left"`
}

// newApproval returns the record of an approval request, or nil when id is
// not a safe token.
func newApproval(id, summary string) *ApprovalInfo {
	if !validApprovalID(id) {
		return nil
	}
	return &ApprovalInfo{ID: id, Summary: boundSummary(summary)}
}

// validApprovalID reports whether id is 1 to MaxApprovalIDLen bytes of
// ASCII letters, digits and "_-.:".
func validApprovalID(id string) bool {
	if id == "" || len(id) > MaxApprovalIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}

// ellipsis ends a summary that was cut.
const ellipsis = "…"

// boundSummary returns s as valid UTF-8 of at most MaxApprovalSummary
// bytes, cut at a character boundary and ended with an ellipsis when longer.
func boundSummary(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= MaxApprovalSummary {
		return s
	}
	cut := MaxApprovalSummary - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// newSpend returns a spend record with every amount finite and not
// negative, and what is left.
func newSpend(limit, spent float64) *SpendInfo {
	limit, spent = amount(limit), amount(spent)
	return &SpendInfo{Limit: limit, Spent: spent, Left: max(limit-spent, 0)}
}

// amount returns f, or 0 when f is negative, NaN or infinite.
func amount(f float64) float64 {
	if !(f > 0) || math.IsInf(f, 1) {
		return 0
	}
	return f
}

// invalidGuardrail replaces a malformed guardrail name.
const invalidGuardrail = "invalid_name"

// guardrailName returns name when it is "" or a well-formed name (the rule
// of [ValidCode]), and invalidGuardrail otherwise.
func guardrailName(name string) string {
	if name == "" || ValidCode(name) {
		return name
	}
	return invalidGuardrail
}

// Seconds is a duration that encodes in JSON as a number of seconds, as the
// HTTP Retry-After header counts.
type Seconds time.Duration

// MarshalJSON encodes s as seconds, to the nanosecond: every duration up to
// [MaxRetryAfter] decodes back to itself.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(s).Seconds())
}

// UnmarshalJSON decodes a number of seconds, held to [0, MaxRetryAfter]
// like every retry-after hint, so a record never fails to decode over an
// extreme value.
func (s *Seconds) UnmarshalJSON(data []byte) error {
	var f float64
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	switch {
	case !(f > 0): // also NaN
		*s = 0
	case f >= MaxRetryAfter.Seconds():
		*s = Seconds(MaxRetryAfter)
	default:
		*s = Seconds(math.Round(f * float64(time.Second)))
	}
	return nil
}

// InfoOf returns the record of err. For nil it returns the zero Info. An
// untyped error becomes tool-failed/unmapped_failure with its message
// withheld; a bare context.Canceled becomes tool-cancelled/cancelled and a
// bare context.DeadlineExceeded tool-timeout/deadline_exceeded.
func InfoOf(err error) Info {
	if err == nil {
		return Info{}
	}
	if te, ok := From(err); ok {
		info := Info{
			Kind:       te.Kind(),
			Code:       te.Code(),
			Tool:       te.Tool(),
			Retryable:  te.Retryable(),
			Final:      isFinal(te),
			RetryAfter: Seconds(ClampRetryAfter(te.RetryAfter())),
		}
		if _, native := te.(*ToolError); !native {
			info.normalise()
		}
		if m, ok := te.(interface{ Message() string }); ok {
			info.Message = m.Message()
		}
		if f, ok := te.(interface{ Fields() []FieldError }); ok {
			info.Fields = f.Fields()
		}
		if native, ok := te.(*ToolError); ok {
			info.Approval, info.Spend, info.Guardrail = native.Approval(), native.Spend(), native.guardrail
		}
		return info
	}
	switch {
	case errors.Is(err, context.Canceled):
		return Info{Kind: KindCancelled, Code: CodeCancelled}
	case errors.Is(err, context.DeadlineExceeded):
		return Info{Kind: KindTimeout, Code: CodeDeadlineExceeded}
	}
	return Info{Kind: KindFailed, Code: CodeUnmappedFailure}
}

// normalise holds a record of an Error implemented outside this package to
// the rules a *ToolError keeps by construction: a built-in kind (else
// tool-failed), a well-formed code (else invalid_code), no tool name (it
// may say anything; toolmw.Wrap names the tool at the chain's edge), never
// retryable when a refusal or a cancellation. Its message and field errors
// are kept like those of a *ToolError: the redact layer scrubs them, and so
// does toolmw.Wrap at the chain's edge.
// What it says is data from elsewhere; nothing of it reaches a span, a log
// or the model as given.
func (i *Info) normalise() {
	if _, ok := lookupKind(i.Kind); !ok {
		i.Kind = KindFailed
	}
	if !ValidCode(i.Code) {
		i.Code = CodeInvalidCode
	}
	i.Tool = ""
	if i.Kind == KindRefused || i.Kind == KindCancelled {
		i.Retryable = false
	}
}

// validToolName reports whether name is "" or a valid tool name: 1 to 64
// bytes of a-z, A-Z, 0-9, '_' and '-' (toolmw.ValidName's rule).
func validToolName(name string) bool {
	if len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// Err returns a typed error equivalent to the one the record was made from:
// the same kind, code, tool, retryability, finality, retry-after, message,
// field errors, approval, spend and guardrail records, each held to the
// rules of its With method. The cause does not cross.
func (i Info) Err() *ToolError {
	e := New(i.Kind, i.Code, i.Message)
	e.tool = i.Tool
	e.retryable = i.Retryable && e.mayRetry()
	e.retryAfter = ClampRetryAfter(time.Duration(i.RetryAfter))
	e.final = i.Final
	if !validToolName(e.tool) {
		e.tool = ""
	}
	if len(i.Fields) > 0 {
		e.fields = append([]FieldError(nil), i.Fields...)
	}
	if i.Approval != nil {
		e.approval = newApproval(i.Approval.ID, i.Approval.Summary)
	}
	if i.Spend != nil {
		e.spend = newSpend(i.Spend.Limit, i.Spend.Spent)
	}
	e.guardrail = guardrailName(i.Guardrail)
	return e
}

// ProblemContentType is the media type of an RFC 9457 problem document.
const ProblemContentType = "application/problem+json"

// Problem is an RFC 9457 problem document. Type is a URN naming the kind
// (urn:toolmw:kind:tool-refused); the toolmw members are extensions.
type Problem struct {
	Type       string        `json:"type"`
	Title      string        `json:"title"`
	Status     int           `json:"status"`
	Detail     string        `json:"detail,omitempty"`
	Code       string        `json:"code"`
	Tool       string        `json:"tool,omitempty"`
	Retryable  bool          `json:"retryable"`
	RetryAfter Seconds       `json:"retry_after,omitempty"`
	Errors     []FieldError  `json:"errors,omitempty"`
	Approval   *ApprovalInfo `json:"approval,omitempty"`
	Spend      *SpendInfo    `json:"spend,omitempty"`
	Guardrail  string        `json:"guardrail,omitempty"`
}

// ProblemTypePrefix prefixes the kind in a problem's type member.
const ProblemTypePrefix = "urn:toolmw:kind:"

// Problem renders the record as an RFC 9457 problem document. Marshal it
// with encoding/json and serve it as [ProblemContentType].
func (i Info) Problem() Problem {
	ki, ok := lookupKind(i.Kind)
	if !ok {
		ki = KindInfo{Title: string(i.Kind), Status: 500}
	}
	return Problem{
		Type:       ProblemTypePrefix + string(i.Kind),
		Title:      ki.Title,
		Status:     ki.Status,
		Detail:     i.Message,
		Code:       i.Code,
		Tool:       i.Tool,
		Retryable:  i.Retryable,
		RetryAfter: i.RetryAfter,
		Errors:     i.Fields,
		Approval:   i.Approval,
		Spend:      i.Spend,
		Guardrail:  i.Guardrail,
	}
}
