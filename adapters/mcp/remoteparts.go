package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/taxonomy"
)

// The bounds of what a Remote keeps of a server's tool result. The SDK has
// decoded the answer (its base64 included) before a Remote sees it, so the
// answer's own size is the transport's to bound (for streamable HTTP, the
// SDK reads at most StreamableClientTransport.MaxEventSize bytes of an
// event: 16 MiB by default); these bounds decide what of it enters the
// run, counted before anything is kept.
const (
	// MaxRemotePartBytes is the most bytes one part of a remote result may
	// hold ([toolmw.Part.Size]: its text or data, URI, name and MIME
	// type): 8 MiB. A larger part fails the call as
	// tool-result-invalid/result_too_large.
	MaxRemotePartBytes = 8 << 20
	// MaxRemoteResultBytes is the most bytes a remote result may hold, its
	// parts and structured content together: 16 MiB; more fails the call
	// as tool-result-invalid/result_too_large.
	MaxRemoteResultBytes = 16 << 20
	// MaxRemoteURILen is the longest URI a Remote keeps, in bytes: 8 KiB.
	// A URI is kept as the server gave it, never cut (a cut URI names
	// something else): a longer one fails the call as
	// tool-result-invalid/result_part_invalid.
	MaxRemoteURILen = 8 << 10
	// maxRemoteNameLen is the longest resource name kept; a longer one is
	// cut, ending in "…".
	maxRemoteNameLen = 1 << 10
	// maxMIMELen is the longest MIME type accepted (RFC 6838's 127 for
	// each of type and subtype, and parameters).
	maxMIMELen = 255
	// maxLastModifiedLen bounds an annotation's lastModified; a longer one
	// is dropped.
	maxLastModifiedLen = 64
)

// errRemoteTooLarge fails a call whose result is over a bound.
func errRemoteTooLarge(what string, bound int) error {
	return taxonomy.New(taxonomy.KindResultInvalid, taxonomy.CodeResultTooLarge,
		fmt.Sprintf("the MCP server's result: %s is over %d bytes", what, bound))
}

// errRemotePart fails a call whose result holds a part a Remote refuses.
func errRemotePart(i int, why string) error {
	return taxonomy.New(taxonomy.KindResultInvalid, taxonomy.CodeResultPartInvalid,
		fmt.Sprintf("the MCP server's result: content %d %s", i, why))
}

// remoteResult is a successful result of a server as a toolmw Result.
//
// A result of text content only, without annotations, is what it has
// always been: the text blocks joined by newlines, or, with
// structuredContent, a JSON result (the text when it is that document,
// keeping the server's key order, else structuredContent encoded). Any
// other result is parts, one per content block in order: text, image and
// audio (bytes and MIME type), an embedded resource (its URI, MIME type,
// and text or blob), a resource link (URI, name, MIME type), each with its
// annotations. With structuredContent, the parts begin with a JSON part
// of it, and the text blocks are taken as its serialization (as MCP asks
// a server to send them) and left out; the other blocks follow.
//
// Everything is bounded before it is kept ([MaxRemotePartBytes],
// [MaxRemoteResultBytes], [MaxRemoteURILen]); MIME types are checked
// (type/subtype of token characters, parameters well formed); URIs are
// kept as given, but must be valid UTF-8 without control characters.
func remoteResult(res *sdk.CallToolResult) (toolmw.Result, error) {
	total, plain := 0, true
	for i, c := range res.Content {
		n, err := contentSize(i, c)
		if err != nil {
			return toolmw.Result{}, err
		}
		if n > MaxRemotePartBytes {
			return toolmw.Result{}, errRemoteTooLarge(fmt.Sprintf("content %d", i), MaxRemotePartBytes)
		}
		if total += n; total > MaxRemoteResultBytes {
			return toolmw.Result{}, errRemoteTooLarge("the content", MaxRemoteResultBytes)
		}
		if t, ok := c.(*sdk.TextContent); !ok || t.Annotations != nil {
			plain = false
		}
	}
	var structured []byte
	if res.StructuredContent != nil {
		text := textOf(res)
		if plain && strings.TrimSpace(text) != "" && json.Valid([]byte(text)) {
			structured = []byte(text)
		} else {
			b, err := json.Marshal(res.StructuredContent)
			if err != nil {
				return toolmw.Result{}, taxonomy.New(taxonomy.KindResultInvalid, taxonomy.CodeResultNotJSON,
					"the MCP server's structured content is not JSON")
			}
			structured = b
		}
		if len(structured) > MaxRemotePartBytes {
			return toolmw.Result{}, errRemoteTooLarge("the structured content", MaxRemotePartBytes)
		}
		if total+len(structured) > MaxRemoteResultBytes {
			return toolmw.Result{}, errRemoteTooLarge("the result", MaxRemoteResultBytes)
		}
	}
	if plain {
		if structured != nil {
			return toolmw.Result{Content: string(structured), JSON: true}, nil
		}
		return toolmw.Text(textOf(res)), nil
	}
	parts := make([]toolmw.Part, 0, len(res.Content)+1)
	if structured != nil {
		parts = append(parts, toolmw.Part{Kind: toolmw.PartJSON, Text: string(structured)})
	}
	for i, c := range res.Content {
		if _, text := c.(*sdk.TextContent); text && structured != nil {
			continue
		}
		p, err := partOf(i, c)
		if err != nil {
			return toolmw.Result{}, err
		}
		parts = append(parts, p)
	}
	return toolmw.Parts(parts...), nil
}

// contentSize is how many bytes content i would keep, counted without
// copying; a block of a kind a tool result may not hold is an error.
func contentSize(i int, c sdk.Content) (int, error) {
	switch c := c.(type) {
	case *sdk.TextContent:
		return len(c.Text), nil
	case *sdk.ImageContent:
		return len(c.Data) + len(c.MIMEType), nil
	case *sdk.AudioContent:
		return len(c.Data) + len(c.MIMEType), nil
	case *sdk.ResourceLink:
		return len(c.URI) + min(len(c.Name), maxRemoteNameLen) + len(c.MIMEType), nil
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return 0, errRemotePart(i, "is an embedded resource without contents")
		}
		return len(c.Resource.URI) + len(c.Resource.MIMEType) + len(c.Resource.Text) + len(c.Resource.Blob), nil
	case nil:
		return 0, errRemotePart(i, "is null")
	}
	return 0, errRemotePart(i, fmt.Sprintf("is of a type a tool result may not hold (%T)", c))
}

// partOf is content i as a part, checked.
func partOf(i int, c sdk.Content) (toolmw.Part, error) {
	var p toolmw.Part
	var a *sdk.Annotations
	switch c := c.(type) {
	case *sdk.TextContent:
		p, a = toolmw.TextPart(unenvelope(c.Text)), c.Annotations
	case *sdk.ImageContent:
		p, a = toolmw.ImagePart(c.Data, c.MIMEType), c.Annotations
	case *sdk.AudioContent:
		p, a = toolmw.AudioPart(c.Data, c.MIMEType), c.Annotations
	case *sdk.ResourceLink:
		p, a = toolmw.ResourceLinkPart(c.URI, truncate(strings.ToValidUTF8(c.Name, "\uFFFD"), maxRemoteNameLen), c.MIMEType), c.Annotations
	case *sdk.EmbeddedResource:
		r := c.Resource
		if len(r.Blob) > 0 {
			p = toolmw.BlobResourcePart(r.URI, r.MIMEType, r.Blob)
		} else {
			p = toolmw.ResourcePart(r.URI, r.MIMEType, unenvelope(r.Text))
		}
		a = c.Annotations
	}
	switch p.Kind {
	case toolmw.PartImage, toolmw.PartAudio:
		if len(p.Data) == 0 {
			return p, errRemotePart(i, "is "+string(p.Kind)+" without data")
		}
		if !validMIME(p.MIMEType) {
			return p, errRemotePart(i, "has no valid MIME type")
		}
	case toolmw.PartResourceLink, toolmw.PartResource:
		if p.MIMEType != "" && !validMIME(p.MIMEType) {
			return p, errRemotePart(i, "has a MIME type that is not valid")
		}
		switch {
		case p.URI == "":
			return p, errRemotePart(i, "has no URI")
		case len(p.URI) > MaxRemoteURILen:
			return p, errRemotePart(i, fmt.Sprintf("has a URI over %d bytes", MaxRemoteURILen))
		case !validURI(p.URI):
			return p, errRemotePart(i, "has a URI that is not valid UTF-8 or holds control characters")
		}
	}
	p.Annotations = annotationsOf(a)
	return p, nil
}

// annotationsOf keeps what is well formed of a block's annotations: the
// audiences "user" and "assistant", a priority from 0 to 1 (the SDK reads
// an absent one as 0, which is kept as not said), a short lastModified.
func annotationsOf(a *sdk.Annotations) *toolmw.Annotations {
	if a == nil {
		return nil
	}
	var out toolmw.Annotations
	for _, r := range a.Audience {
		if (r == "user" || r == "assistant") && len(out.Audience) < 2 && (len(out.Audience) == 0 || out.Audience[0] != string(r)) {
			out.Audience = append(out.Audience, string(r))
		}
	}
	if a.Priority > 0 && a.Priority <= 1 {
		p := a.Priority
		out.Priority = &p
	}
	if len(a.LastModified) <= maxLastModifiedLen && validURI(a.LastModified) {
		out.LastModified = a.LastModified
	}
	if out.Audience == nil && out.Priority == nil && out.LastModified == "" {
		return nil
	}
	return &out
}

// validMIME reports whether s is a media type: type "/" subtype, each of
// RFC 2045 token characters, then ";" parameters (attribute=token or
// quoted string), at most 255 bytes.
func validMIME(s string) bool {
	if s == "" || len(s) > maxMIMELen {
		return false
	}
	head, params, hasParams := strings.Cut(s, ";")
	typ, sub, ok := strings.Cut(strings.TrimSpace(head), "/")
	if !ok || !token(typ) || !token(sub) || (hasParams && params == "") {
		return false
	}
	for params != "" {
		var p string
		p, params = cutParam(params)
		if p == "" {
			return false
		}
		attr, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !token(attr) {
			return false
		}
		if !token(val) && !quoted(val) {
			return false
		}
	}
	return true
}

// cutParam cuts the first parameter from params, minding quoted strings.
func cutParam(params string) (p, rest string) {
	in := false
	for i := 0; i < len(params); i++ {
		switch c := params[i]; {
		case c == '\\' && in:
			i++
		case c == '"':
			in = !in
		case c == ';' && !in:
			return params[:i], params[i+1:]
		}
	}
	if in {
		return "", ""
	}
	return params, ""
}

// token reports whether s is a non-empty RFC 2045 token.
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?=`, c) >= 0 {
			return false
		}
	}
	return true
}

// quoted reports whether s is a quoted string of printable ASCII.
func quoted(s string) bool {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if s[i] < ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// validURI reports whether s is valid UTF-8 without control characters:
// what a URI kept as given must be so that no rendering of it breaks a
// line or a terminal.
func validURI(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}
