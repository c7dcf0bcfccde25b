package mcp

import (
	"encoding/json"
	"math"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/adapters/mcp/internal/wire"
	"github.com/toolmw/toolmw/taxonomy"
)

// The errors of a result the adapter cannot send.
var (
	// errPartInvalid: a part of no known kind, or an image, audio or file
	// with neither bytes nor a URI.
	errPartInvalid = taxonomy.ResultInvalid(taxonomy.CodeResultPartInvalid,
		"a part of the result is of no known kind, or holds nothing to send")
	// errNotStructured: the tool publishes an output schema, and MCP then
	// requires structured content, which only a JSON object gives.
	errNotStructured = taxonomy.ResultInvalid(taxonomy.CodeResultNotJSON,
		"the tool declares an output schema and its result holds no JSON object")
)

// maxLastModified bounds an annotation's lastModified: an ISO 8601 time is
// far shorter.
const maxLastModified = 64

// contentOf maps a result to MCP content, as ForModelParts gives its parts
// (text enveloped as untrusted data), and to its structured content: the
// value of its first JSON part when that is a JSON object (MCP's
// structuredContent is an object), else nil. A part that cannot be sent is
// result_part_invalid.
func contentOf(res toolmw.Result) ([]sdk.Content, any, *taxonomy.ToolError) {
	parts := res.AllParts()
	var structured any
	for _, p := range parts {
		if p.Kind == toolmw.PartJSON {
			if js, ok := wire.StructuredJSON(p.Text); ok {
				structured = js
			}
			break
		}
	}
	sent := toolmw.ForModelParts(res)
	content := make([]sdk.Content, 0, len(sent))
	for _, p := range sent {
		c, ok := contentOfPart(p)
		if !ok {
			return nil, nil, errPartInvalid
		}
		content = append(content, c)
	}
	return content, structured, nil
}

// contentOfPart is one part (already through ForModelParts) as an MCP
// content block; false for a part that cannot be sent.
func contentOfPart(p toolmw.Part) (sdk.Content, bool) {
	ann := sdkAnnotationsOf(p.Annotations)
	switch p.Kind {
	case toolmw.PartText, toolmw.PartJSON:
		return &sdk.TextContent{Text: p.Text, Annotations: ann}, true
	case toolmw.PartImage:
		if len(p.Data) > 0 {
			return &sdk.ImageContent{Data: p.Data, MIMEType: p.MIMEType, Annotations: ann}, true
		}
		return linkOf(p, ann)
	case toolmw.PartAudio:
		if len(p.Data) > 0 {
			return &sdk.AudioContent{Data: p.Data, MIMEType: p.MIMEType, Annotations: ann}, true
		}
		return linkOf(p, ann)
	case toolmw.PartFile:
		if len(p.Data) > 0 {
			return &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{
				URI: fileURI(p), MIMEType: p.MIMEType, Blob: p.Data,
			}, Annotations: ann}, true
		}
		return linkOf(p, ann)
	case toolmw.PartResourceLink:
		return linkOf(p, ann)
	case toolmw.PartResource:
		if p.URI == "" {
			return nil, false
		}
		rc := &sdk.ResourceContents{URI: p.URI, MIMEType: p.MIMEType, Text: p.Text}
		if p.Text == "" {
			rc.Blob = p.Data
			if rc.Blob == nil {
				rc.Blob = []byte{} // "blob": "" — a resource holds text or a blob
			}
		}
		return &sdk.EmbeddedResource{Resource: rc, Annotations: ann}, true
	}
	return nil, false
}

// linkOf is a part that points at its content as a resource link: MCP
// requires a name, so one without gets its kind.
func linkOf(p toolmw.Part, ann *sdk.Annotations) (sdk.Content, bool) {
	if p.URI == "" {
		return nil, false
	}
	name := p.Name
	if name == "" {
		name = strings.ReplaceAll(string(p.Kind), "_", " ")
	}
	return &sdk.ResourceLink{URI: p.URI, Name: name, MIMEType: p.MIMEType, Annotations: ann}, true
}

// fileURI is the URI of an embedded file: its own, else one made of its
// name under the scheme "attachment" (an embedded resource needs a URI and
// has no name), escaped so that a name cannot add a path or a query.
func fileURI(p toolmw.Part) string {
	if p.URI != "" {
		return p.URI
	}
	name := p.Name
	if name == "" {
		name = "file"
	}
	return "attachment:" + url.PathEscape(name)
}

// sdkAnnotationsOf maps a part's annotations, keeping what MCP allows: the
// audiences "user" and "assistant", a priority from 0 to 1 (MCP has no
// "unset" apart from 0), a short lastModified. Nil when nothing is left.
func sdkAnnotationsOf(a *toolmw.Annotations) *sdk.Annotations {
	if a == nil {
		return nil
	}
	out := &sdk.Annotations{}
	for _, r := range a.Audience {
		if r == "user" || r == "assistant" {
			out.Audience = append(out.Audience, sdk.Role(r))
		}
	}
	if p := a.Priority; p != nil && !math.IsNaN(*p) {
		out.Priority = min(max(*p, 0), 1)
	}
	if len(a.LastModified) <= maxLastModified {
		out.LastModified = a.LastModified
	}
	if out.Audience == nil && out.Priority == 0 && out.LastModified == "" {
		return nil
	}
	return out
}

// objectSchema reports whether doc is a schema MCP accepts as a tool's
// outputSchema: a JSON object whose "type" is "object".
func objectSchema(doc json.RawMessage) bool {
	var s struct {
		Type any `json:"type"`
	}
	return json.Unmarshal(doc, &s) == nil && s.Type == "object"
}
