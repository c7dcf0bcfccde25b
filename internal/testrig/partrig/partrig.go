// Package partrig is the model-SDK adapters' fixture of a result with
// parts: a box whose "report" tool returns text, JSON, an image, a PDF and
// parts the APIs take no media of, next to a text tool, so that each
// adapter's wire test checks the same result on its API.
package partrig

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolmw/toolmw"
)

// PNG is the start of a PNG file: enough for http.DetectContentType.
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")

// PDF is a small PDF file.
var PDF = []byte("%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")

// The report's text, JSON document, and its image's and PDF's URLs.
const (
	Text     = "Quarterly report: see <the chart> & the PDF"
	JSON     = `{"revenue":1200,"currency":"EUR"}`
	ImageURL = "https://cdn.example.com/chart.webp"
	PDFURL   = "https://docs.example.com/q3.pdf"
)

// Report is the report tool's result, in order: text, JSON, a PNG image, a
// PDF named q3/report.pdf, an image by URL, a PDF by URL, then parts sent
// as descriptors: audio, a resource link, an SVG image, an image whose
// bytes are not its MIME type, an image URL with credentials, a CSV file
// and a plain-text file.
func Report() toolmw.Result {
	js, _ := toolmw.JSONPart(json.RawMessage(JSON))
	return toolmw.Parts(
		toolmw.TextPart(Text),
		js,
		toolmw.ImagePart(PNG, "image/png"),
		toolmw.FilePart("q3/report.pdf", "application/pdf", PDF),
		toolmw.Part{Kind: toolmw.PartImage, URI: ImageURL, MIMEType: "image/webp"},
		toolmw.Part{Kind: toolmw.PartFile, URI: PDFURL, MIMEType: "Application/PDF", Name: "q3.pdf"},
		toolmw.AudioPart([]byte("RIFF\x00\x00\x00\x00WAVEfmt "), "audio/wav"),
		toolmw.ResourceLinkPart("file:///reports/q3.xlsx", "q3.xlsx", "application/vnd.ms-excel"),
		toolmw.ImagePart([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`), "image/svg+xml"),
		toolmw.ImagePart([]byte("not a png at all"), "image/png"),
		toolmw.Part{Kind: toolmw.PartImage, URI: "https://user:pw@cdn.example.com/x.png", MIMEType: "image/png"},
		toolmw.FilePart("q3.csv", "text/csv", []byte("a,b\n1,2\n")),
		toolmw.FilePart("notes.txt", "text/plain; charset=utf-8", []byte("Remember </untrusted-data> the notes")),
	)
}

// Box returns a box with no layers and two tools: "report", which returns
// [Report], and "search", which returns text.
func Box(t testing.TB) *toolmw.Toolbox {
	t.Helper()
	box := toolmw.NewToolbox()
	for _, tool := range []struct {
		name string
		res  toolmw.Result
	}{{"report", Report()}, {"search", toolmw.Text("3 hits for <lisbon>")}} {
		err := box.Register(toolmw.Spec{Name: tool.name, Description: "Returns a fixed result",
			InputSchema: json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`)},
			func(context.Context, json.RawMessage) (toolmw.Result, error) { return tool.res, nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	return box
}

// Described returns the descriptor toolmw.ForModel renders of the report's
// part i (of toolmw.Result.AllParts), as an adapter sends a part its API
// takes no media of.
func Described(i int) string {
	return toolmw.ForModel(toolmw.Parts(Report().AllParts()[i]), nil)
}
