// Package wire holds what both MCP SDK adapters put on the wire and read
// from it: the _meta keys, the isError rendering of an error, tool names
// made model-safe, and the typed error of a remote tool's own failure.
package wire

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/scrub"
	"github.com/toolmw/toolmw/taxonomy"
)

// The _meta keys toolmw reads and writes. MCP reserves prefixes naming
// modelcontextprotocol or mcp; "toolmw/" is ours.
const (
	// MetaCallID is the key of the model's call id in a tools/call
	// request's _meta.
	MetaCallID = "toolmw/call_id"
	// MetaError is the key of the taxonomy.Info record in an isError
	// result's _meta.
	MetaError = "toolmw/error"
)

// Failure is what a server sends for a call that ended in an error.
type Failure struct {
	Text  string        // ForModel's envelope: the result's only content
	Info  taxonomy.Info // the record that goes into _meta under MetaError
	Typed error         // a typed error for the server's own middleware
}

// FailureOf renders err. An untyped err becomes the typed error of its
// record, wrapping it, so the server's middleware sees a taxonomy.Error
// whose Error() holds none of err's text.
func FailureOf(err error) Failure {
	info := taxonomy.InfoOf(err)
	typed := err
	if _, ok := taxonomy.From(err); !ok {
		typed = info.Err().WithCause(err)
	}
	return Failure{Text: toolmw.ForModel(toolmw.Result{}, err), Info: info, Typed: typed}
}

// MetaInfo returns the record as a _meta value: a map, as it looks after
// a trip through JSON, so a server's middleware sees what a client will.
func (f Failure) MetaInfo() map[string]any {
	b, err := json.Marshal(f.Info)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// MaxNameLen is the longest model-safe tool name.
const MaxNameLen = 64

// hashLen is how many hex digits of a hash end a shortened name.
const hashLen = 8

// ModelName maps the MCP tool name name, with prefix in front, to a name
// every model API accepts, [a-zA-Z0-9_-]{1,64}: each other character
// becomes '_', and a result longer than 64 bytes keeps its first 55 bytes,
// then '_' and 8 hex digits of the SHA-256 of prefix+name. A name that is
// already model-safe and short enough comes back as it is. Distinct names
// can map to the same one ("a.b" and "a_b"); callers report that.
func ModelName(prefix, name string) string {
	full := prefix + name
	safe := toolmw.ValidName(full)
	if safe {
		return full
	}
	var b strings.Builder
	b.Grow(len(full))
	for _, r := range full {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		s = "_"
	}
	if len(s) > MaxNameLen {
		sum := sha256.Sum256([]byte(full))
		s = s[:MaxNameLen-hashLen-1] + "_" + hex.EncodeToString(sum[:])[:hashLen]
	}
	return s
}

// SafeName reports whether name, which came from the other side (a
// client's tools/call), may be repeated as it is: it is a valid toolmw
// name, nothing in it looks like a secret (SecretIn), and it has no run of
// 16 or more letters and digits with both in it, which reads as a key of
// unknown shape.
func SafeName(name string) bool {
	if !toolmw.ValidName(name) || SecretIn(name) {
		return false
	}
	run, letter, digit := 0, false, false
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= '0' && c <= '9':
			run, digit = run+1, true
		case c == '_' || c == '-':
			run, letter, digit = 0, false, false
		default:
			run, letter = run+1, true
		}
		if run >= 16 && letter && digit {
			return false
		}
	}
	return true
}

// maxSecretScan is the longest text SecretIn searches; a longer one is
// taken to hold a secret.
const maxSecretScan = 256

// SecretIn reports whether the scrubber finds something in s even where
// it is glued to a word: the scrubber needs a word boundary before a token,
// so every suffix of s is searched (call_ghp_…, getAKIA…), and every part
// of s before a separator (_ - . / : or a blank). The work is bounded: a
// text longer than 256 bytes counts as holding one.
func SecretIn(s string) bool {
	if len(s) > maxSecretScan {
		return true
	}
	for i := 0; i < len(s); i++ {
		if t := s[i:]; scrub.String(t) != t {
			return true
		}
		switch s[i] {
		case '_', '-', '.', '/', ':', ' ':
			if t := s[:i]; scrub.String(t) != t {
				return true
			}
		}
	}
	return false
}

// MaxMessageLen bounds the text of a remote tool's failure that becomes a
// typed error's message, in bytes (after scrubbing).
const MaxMessageLen = 1024

// The codes of a failure reported in a tool's own words (an isError
// result) without a toolmw record.
const (
	// CodeRemoteToolError: a remote MCP tool answered with an isError
	// result.
	CodeRemoteToolError = "remote_tool_error"
	// CodeToolReportedError: an mcp-go tool handler returned an isError
	// result.
	CodeToolReportedError = "tool_reported_error"
	// CodeRemoteCancelled: the server's record said the call was
	// cancelled, a cancellation that was not the caller's here (the
	// server cut the call short: it was shutting down, say). The tool may
	// have run.
	CodeRemoteCancelled = "remote_cancelled"
)

// CodeRemoteCancelled is declared: telemetry shows it as given.
var _ = taxonomy.Declare(CodeRemoteCancelled)

// Adopt returns the typed error of a record a server sent (as _meta or as
// a JSON-RPC error's data), with its message untrusted. The kind, code and
// retryability are the server's, except a cancellation: tool-cancelled means, here,
// that this process's caller cancelled the call, and it matches
// context.Canceled, which stops an agent loop. A server's cancellation is
// a failure of the remote call instead: tool-failed with
// CodeRemoteCancelled, never retryable (the tool may have run). See
// OwnCancel for a caller that did cancel.
func Adopt(info taxonomy.Info) *taxonomy.ToolError {
	if info.Kind == taxonomy.KindCancelled {
		return taxonomy.New(taxonomy.KindFailed, CodeRemoteCancelled,
			"the call was cancelled on the far side, not by this caller; it may have run").WithRetryable(false)
	}
	return taxonomy.New(info.Kind, info.Code, Untrusted(info.Message)).WithRetryable(info.Retryable)
}

// OwnCancel returns ctx's error when e is a server's cancellation
// (CodeRemoteCancelled) and ctx is done: the cancellation was then the
// caller's own, and it passes through unchanged. Otherwise it returns e.
func OwnCancel(ctx context.Context, e *taxonomy.ToolError) error {
	if e.Code() == CodeRemoteCancelled && ctx.Err() != nil {
		return ctx.Err()
	}
	return e
}

// ReportedFailure is the typed error of an isError answer whose text
// content is text and whose _meta value under MetaError is meta (nil when
// absent). It is never retryable: the tool answered. A record from toolmw
// gives the kind, code, message and field errors; otherwise the error is
// tool-failed with code (CodeRemoteToolError, CodeToolReportedError) and
// the text as its message. Either way
// the message is untrusted: an envelope around it is taken off
// (ParseEnvelope), it is scrubbed and cut to MaxMessageLen, and it reaches
// the model only inside ForModel's envelope. The tool name is left for
// toolmw.Wrap to fill in.
func ReportedFailure(code, text string, meta any) *taxonomy.ToolError {
	if info, ok := infoOf(meta); ok {
		e := Adopt(info).WithRetryable(false)
		if len(info.Fields) > 0 {
			e = e.WithFields(safeFields(info.Fields)...)
		}
		return e
	}
	if _, content, ok := toolmw.ParseEnvelope(text); ok {
		text = content
	}
	return taxonomy.Failure(code, Untrusted(text))
}

// InfoOf reads a taxonomy.Info from a _meta value, as a map or as JSON,
// and reports whether it holds a built-in kind and a well-formed code.
func InfoOf(meta any) (taxonomy.Info, bool) { return infoOf(meta) }

func infoOf(meta any) (taxonomy.Info, bool) {
	if meta == nil {
		return taxonomy.Info{}, false
	}
	var raw []byte
	switch v := meta.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return taxonomy.Info{}, false
		}
		raw = b
	}
	if len(raw) > maxInfoBytes {
		return taxonomy.Info{}, false
	}
	var info taxonomy.Info
	if json.Unmarshal(raw, &info) != nil || !builtIn(info.Kind) || !taxonomy.ValidCode(info.Code) {
		return taxonomy.Info{}, false
	}
	return info, true
}

// maxInfoBytes bounds a record read from the wire.
const maxInfoBytes = 64 << 10

// maxFields bounds the field errors kept from a remote record, as Typed
// bounds its own.
const maxFields = 20

func builtIn(k taxonomy.Kind) bool {
	for _, ki := range taxonomy.Kinds() {
		if ki.Kind == k {
			return true
		}
	}
	return false
}

// safeFields keeps at most maxFields field errors, each with a snake_case
// type (else "value_error"), a location of short strings and integers, and
// an untrusted message.
func safeFields(fs []taxonomy.FieldError) []taxonomy.FieldError {
	if len(fs) > maxFields {
		fs = fs[:maxFields]
	}
	out := make([]taxonomy.FieldError, 0, len(fs))
	for _, f := range fs {
		typ := f.Type
		if !taxonomy.ValidCode(typ) {
			typ = "value_error"
		}
		loc := make([]any, 0, len(f.Loc))
		for _, l := range f.Loc {
			switch v := l.(type) {
			case int:
				loc = append(loc, v)
			case string:
				loc = append(loc, cut(scrub.String(v), 64))
			default:
				loc = append(loc, "*")
			}
		}
		out = append(out, taxonomy.FieldError{Type: typ, Loc: loc, Msg: cut(scrub.String(f.Msg), 256)})
	}
	return out
}

// Untrusted returns text from elsewhere as a typed error's message may
// hold it: scrubbed, valid UTF-8, at most MaxMessageLen bytes. The whole
// text is scrubbed first, then cut: a cut made before scrubbing can split
// a secret so that the scrubber no longer knows its shape, and leave its
// first bytes in the message. Scrubbing is one pass, linear in the size of
// a text the transport has already read.
func Untrusted(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	return cut(scrub.String(text), MaxMessageLen)
}

// cut returns s cut to at most n bytes at a rune boundary, with "…" when
// it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n - len("…")
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// JoinText joins the text parts of a result, one per line.
func JoinText(parts []string) string {
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts, "\n")
}

// StructuredJSON returns the JSON of a result's structured content when
// content is a JSON object: what the MCP 2025 revisions allow as
// structuredContent.
func StructuredJSON(content string) (json.RawMessage, bool) {
	s := strings.TrimLeft(content, " \t\r\n")
	if !strings.HasPrefix(s, "{") || !json.Valid([]byte(content)) {
		return nil, false
	}
	return json.RawMessage(content), true
}
