package testutil

import (
	"encoding/json"

	"github.com/toolmw/toolmw"
)

// PartsWith returns a result planting secret in every field of a part a
// tool fills: a text part, a JSON part's key and strings, a resource
// link's URI and name, an embedded resource's URI and text, a file's name,
// an image's bytes, MIME type and kind, and annotations. A layer that
// describes parts to telemetry must show none of it.
func PartsWith(secret string) toolmw.Result {
	js, _ := json.Marshal(map[string]any{"note": "key " + secret, secret: []any{secret, 1}})
	return toolmw.Parts(
		toolmw.TextPart("the key is "+secret),
		toolmw.Part{Kind: toolmw.PartJSON, Text: string(js)},
		toolmw.ResourceLinkPart("https://example.com/r?token="+secret, "report "+secret+".pdf", "application/pdf"),
		toolmw.ResourcePart("file:///tmp/"+secret, "text/plain", "line: "+secret),
		toolmw.FilePart(secret+".csv", "text/csv", []byte("a,b")),
		toolmw.ImagePart([]byte(secret), "image/"+secret),
		toolmw.Part{Kind: toolmw.PartKind(secret), Text: "x"},
		toolmw.Part{Kind: toolmw.PartText, Text: "x", Annotations: &toolmw.Annotations{Audience: []string{secret}, LastModified: secret}},
	)
}
