package toolmw

import (
	"encoding/json"
	"strings"

	"github.com/toolmw/toolmw/taxonomy"
)

// The sources of an untrusted-data envelope.
const (
	SourceResult  = "tool_result"  // a tool's result
	SourceRefusal = "tool_refusal" // a tool's refusal: an answer
	SourceError   = "tool_error"   // any other error
)

const (
	envelopeOpen  = `<untrusted-data source="`
	envelopeClose = `</untrusted-data>`
)

// ForModel renders what the model is shown for a call that returned res and
// err. Everything a tool produced is wrapped as untrusted data:
//
//	<untrusted-data source="tool_refusal">booking_not_cancellable: this fare is non-refundable</untrusted-data>
//
// A result is shown as its content; a refusal as "code: message"; any other
// error as "kind code: message" from [taxonomy.InfoOf] (so an untyped error's
// text is withheld), followed by the field errors as JSON for
// tool-args-invalid. The characters &, < and > in content are escaped, so
// content can never close or forge the envelope; [ParseEnvelope] reverses it.
func ForModel(res Result, err error) string {
	if err == nil {
		return envelope(SourceResult, res.Content)
	}
	info := taxonomy.InfoOf(err)
	var b strings.Builder
	source := SourceError
	if info.Kind == taxonomy.KindRefused {
		source = SourceRefusal
	} else {
		b.WriteString(string(info.Kind))
		b.WriteByte(' ')
	}
	b.WriteString(info.Code)
	if info.Message != "" {
		b.WriteString(": ")
		b.WriteString(info.Message)
	}
	if len(info.Fields) > 0 {
		if js, jerr := json.Marshal(info.Fields); jerr == nil {
			b.WriteByte('\n')
			b.Write(js)
		}
	}
	return envelope(source, b.String())
}

func envelope(source, content string) string {
	var b strings.Builder
	b.Grow(len(envelopeOpen) + len(source) + 2 + len(content) + len(envelopeClose) + 16)
	b.WriteString(envelopeOpen)
	b.WriteString(source)
	b.WriteString(`">`)
	escapeTo(&b, content)
	b.WriteString(envelopeClose)
	return b.String()
}

func escapeTo(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); i++ {
		var rep string
		switch s[i] {
		case '&':
			rep = "&amp;"
		case '<':
			rep = "&lt;"
		case '>':
			rep = "&gt;"
		default:
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(rep)
		last = i + 1
	}
	b.WriteString(s[last:])
}

// ParseEnvelope reverses ForModel: it returns the source and the unescaped
// content of one envelope, and false when s is not exactly one well-formed
// envelope.
func ParseEnvelope(s string) (source, content string, ok bool) {
	rest, found := strings.CutPrefix(s, envelopeOpen)
	if !found {
		return "", "", false
	}
	source, rest, found = strings.Cut(rest, `">`)
	if !found || strings.ContainsAny(source, `"<>&`) {
		return "", "", false
	}
	body, found := strings.CutSuffix(rest, envelopeClose)
	if !found || strings.Contains(body, "<") || strings.Contains(body, ">") {
		return "", "", false
	}
	content, ok = unescape(body)
	return source, content, ok
}

func unescape(s string) (string, bool) {
	if !strings.Contains(s, "&") {
		return s, true
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if s[i] != '&' {
			b.WriteByte(s[i])
			i++
			continue
		}
		switch {
		case strings.HasPrefix(s[i:], "&amp;"):
			b.WriteByte('&')
			i += 5
		case strings.HasPrefix(s[i:], "&lt;"):
			b.WriteByte('<')
			i += 4
		case strings.HasPrefix(s[i:], "&gt;"):
			b.WriteByte('>')
			i += 4
		default:
			return "", false
		}
	}
	return b.String(), true
}
