package toolmw

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

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
// tool-args-invalid. A reviewer's denial reads as an answer, "approval-denied
// approval_denied: …", to be shown once and never retried; a call waiting
// for approval (approval-pending) is for the loop to pause, not for the
// model, and reads so if shown. Neither shows the approval's summary. The
// characters &, < and > in content are escaped, and
// so are look-alikes of the brackets (＜／untrusted-data＞) and the invisible
// Unicode tag characters, as numeric references (&#xff1c;), so content can
// never close, forge or hide text from the envelope; [ParseEnvelope]
// reverses it.
func ForModel(res Result, err error) string {
	if err == nil {
		if len(res.Parts()) == 0 {
			return envelope(SourceResult, res.Content)
		}
		return envelope(SourceResult, renderParts(res.AllParts()))
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

// escapeTo writes s with the characters that could close or forge the
// envelope escaped: &, < and > as entities, and as numeric references the
// characters that look like the envelope's brackets (fullwidth ＜ ＞ and
// their kin, see [lookalike]) or hide text from a reader (the Unicode tag
// characters U+E0000–U+E007F, which models read and people do not see).
func escapeTo(b *strings.Builder, s string) {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		var rep string
		size := 1
		switch {
		case c == '&':
			rep = "&amp;"
		case c == '<':
			rep = "&lt;"
		case c == '>':
			rep = "&gt;"
		case c >= utf8.RuneSelf:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			if !lookalike(r) {
				i += size
				continue
			}
			b.WriteString(s[last:i])
			b.WriteString("&#x")
			b.WriteString(strconv.FormatInt(int64(r), 16))
			b.WriteByte(';')
			i += size
			last = i
			continue
		default:
			i++
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(rep)
		i += size
		last = i
	}
	b.WriteString(s[last:])
}

// lookalike reports whether r is escaped as a numeric reference: a
// character that reads as an angle bracket, or a tag character.
func lookalike(r rune) bool {
	switch r {
	case '\uFF1C', '\uFF1E', // fullwidth less-than and greater-than signs
		'\uFE64', '\uFE65', // small less-than and greater-than signs
		'\u2039', '\u203A', // single angle quotation marks
		'\u2329', '\u232A', // angle brackets
		'\u3008', '\u3009', // CJK angle brackets
		'\u27E8', '\u27E9', // mathematical angle brackets
		'\u02C2', '\u02C3', // modifier letter arrowheads
		'\u1438', '\u1433', // Canadian syllabics that read as < and >
		'\u276E', '\u276F', // ornamental angle quotation marks
		'\uFF0F': // fullwidth solidus, as in ＜／untrusted-data＞
		return true
	}
	return r >= 0xE0000 && r <= 0xE007F
}

// ParseEnvelope reverses ForModel: it returns the source and the unescaped
// content of one envelope, and false when s is not exactly one well-formed
// envelope of a source ForModel emits ([SourceResult], [SourceRefusal],
// [SourceError]) with only the escapes ForModel writes.
func ParseEnvelope(s string) (source, content string, ok bool) {
	rest, found := strings.CutPrefix(s, envelopeOpen)
	if !found {
		return "", "", false
	}
	source, rest, found = strings.Cut(rest, `">`)
	if !found {
		return "", "", false
	}
	switch source {
	case SourceResult, SourceRefusal, SourceError:
	default:
		return "", "", false
	}
	body, found := strings.CutSuffix(rest, envelopeClose)
	if !found || strings.Contains(body, "<") || strings.Contains(body, ">") {
		return "", "", false
	}
	content, ok = unescape(body)
	if !ok {
		return "", "", false
	}
	return source, content, true
}

func unescape(s string) (string, bool) {
	if !strings.Contains(s, "&") {
		return s, !hasLookalike(s)
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
		case strings.HasPrefix(s[i:], "&#x"):
			end := strings.IndexByte(s[i:], ';')
			if end < 0 || end > 9 {
				return "", false
			}
			n, err := strconv.ParseInt(s[i+3:i+end], 16, 32)
			// Only the references ForModel writes, spelled as it spells them.
			if err != nil || !lookalike(rune(n)) || s[i+3:i+end] != strconv.FormatInt(n, 16) {
				return "", false
			}
			b.WriteRune(rune(n))
			i += end + 1
		default:
			return "", false
		}
	}
	out := b.String()
	// A look-alike left unescaped in the body was not written by ForModel.
	return out, !hasLookalike(s)
}

// hasLookalike reports whether s holds a character ForModel escapes as a
// numeric reference.
func hasLookalike(s string) bool {
	for _, r := range s {
		if lookalike(r) {
			return true
		}
	}
	return false
}

// ForModelParts returns res's parts as an API that takes parts sends them
// to the model: each text and JSON part, and each embedded resource's text,
// wrapped as untrusted data as [ForModel] wraps a text result; images,
// audio, files and links as they are (their bytes are not text the model
// reads as instructions; their names and URIs were scrubbed by the layers
// like any text). A text Result is one enveloped text part.
func ForModelParts(res Result) []Part {
	parts := res.AllParts()
	out := make([]Part, len(parts))
	for i, p := range parts {
		switch p.Kind {
		case PartText, PartJSON:
			p.Text = envelope(SourceResult, p.Text)
		case PartResource:
			if p.Text != "" {
				p.Text = envelope(SourceResult, p.Text)
			}
		}
		out[i] = p
	}
	return out
}

// renderParts renders parts as the text ForModel wraps: one line or block
// a part.
func renderParts(parts []Part) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch p.Kind {
		case PartText, PartJSON:
			b.WriteString(p.Text)
		case PartResource:
			describe(&b, "resource", p.URI, mimeOf(p), p.Data, p.Text == "")
			if p.Text != "" {
				b.WriteByte('\n')
				b.WriteString(p.Text)
			}
		case PartResourceLink:
			describe(&b, "resource link", p.URI, p.Name, nil, false, mimeOf(p))
		case PartFile:
			describe(&b, "file", p.Name, mimeOf(p), p.Data, len(p.Data) > 0 || p.URI == "", p.URI)
		default:
			describe(&b, strings.ReplaceAll(p.Kind.safe(), "_", " "), mimeOf(p), "", p.Data, len(p.Data) > 0 || p.URI == "", p.URI)
		}
	}
	return b.String()
}

// mimeOf returns p's MIME type as a descriptor shows it: "" when it has
// none, its type/subtype when well formed, else "invalid-mime".
func mimeOf(p Part) string {
	if p.MIMEType == "" {
		return ""
	}
	return safeMIME(p.MIMEType)
}

// describe writes "[what: fields…, N bytes]", skipping empty fields; size
// says whether to give data's length.
func describe(b *strings.Builder, what, f1, f2 string, data []byte, size bool, more ...string) {
	b.WriteByte('[')
	b.WriteString(what)
	b.WriteByte(':')
	sep := " "
	for _, f := range append([]string{f1, f2}, more...) {
		if f != "" {
			b.WriteString(sep)
			b.WriteString(f)
			sep = ", "
		}
	}
	if size {
		b.WriteString(sep)
		b.WriteString(strconv.Itoa(len(data)))
		b.WriteString(" bytes")
	}
	b.WriteByte(']')
}
