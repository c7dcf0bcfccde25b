package anthropic

import (
	"encoding/base64"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/toolmw/toolmw"
	"github.com/toolmw/toolmw/turn"
)

// betaText is tool_result content of one text block.
func betaText(text string) []anthropic.BetaToolResultBlockParamContentUnion {
	return []anthropic.BetaToolResultBlockParamContentUnion{{OfText: &anthropic.BetaTextBlockParam{Text: text}}}
}

// betaContent returns a successful answer as tool_result content: one
// block per part when media takes one of them (as Turn.Blocks does),
// else the one text block of its Text.
func betaContent(a turn.Answer, media *turn.Media) []anthropic.BetaToolResultBlockParamContentUnion {
	blocks, ok := media.Blocks(a.Result)
	if !ok {
		return betaText(a.Text)
	}
	out := make([]anthropic.BetaToolResultBlockParamContentUnion, len(blocks))
	for i, b := range blocks {
		switch b.Kind {
		case turn.BlockImage:
			img := &anthropic.BetaImageBlockParam{}
			if b.URL != "" {
				img.Source.OfURL = &anthropic.BetaURLImageSourceParam{URL: b.URL}
			} else {
				img.Source.OfBase64 = &anthropic.BetaBase64ImageSourceParam{Data: b.Data, MediaType: anthropic.BetaBase64ImageSourceMediaType(b.MIMEType)}
			}
			out[i] = anthropic.BetaToolResultBlockParamContentUnion{OfImage: img}
		case turn.BlockPDF, turn.BlockPlainText:
			doc := &anthropic.BetaRequestDocumentBlockParam{}
			switch {
			case b.Kind == turn.BlockPlainText:
				doc.Source.OfText = &anthropic.BetaPlainTextSourceParam{Data: b.Text}
			case b.URL != "":
				doc.Source.OfURL = &anthropic.BetaURLPDFSourceParam{URL: b.URL}
			default:
				doc.Source.OfBase64 = &anthropic.BetaBase64PDFSourceParam{Data: b.Data}
			}
			if b.Name != "" {
				doc.Title = anthropic.String(b.Name)
			}
			out[i] = anthropic.BetaToolResultBlockParamContentUnion{OfDocument: doc}
		default:
			out[i] = anthropic.BetaToolResultBlockParamContentUnion{OfText: &anthropic.BetaTextBlockParam{Text: b.Text}}
		}
	}
	return out
}

// resultOf returns the content a runner's tool returned as a toolmw
// Result: a single text block as a text result, anything else as parts.
func resultOf(content []anthropic.BetaToolResultBlockParamContentUnion) toolmw.Result {
	if len(content) == 1 && content[0].OfText != nil {
		return toolmw.Text(content[0].OfText.Text)
	}
	var parts []toolmw.Part
	for _, c := range content {
		parts = append(parts, partsOf(c)...)
	}
	if len(parts) == 0 {
		return toolmw.Result{}
	}
	return toolmw.Parts(parts...)
}

// partsOf returns one content block as parts.
func partsOf(c anthropic.BetaToolResultBlockParamContentUnion) []toolmw.Part {
	switch {
	case c.OfText != nil:
		return []toolmw.Part{toolmw.TextPart(c.OfText.Text)}
	case c.OfImage != nil:
		return []toolmw.Part{imagePart(c.OfImage.Source)}
	case c.OfDocument != nil:
		if parts := documentParts(c.OfDocument); parts != nil {
			return parts
		}
	case c.OfSearchResult != nil:
		s := c.OfSearchResult
		text := s.Title
		for _, t := range s.Content {
			text += "\n" + t.Text
		}
		return []toolmw.Part{toolmw.ResourcePart(s.Source, "text/plain", text)}
	case c.OfToolReference != nil:
		return []toolmw.Part{toolmw.TextPart("[tool reference: " + c.OfToolReference.ToolName + "]")}
	}
	// A browser state, a document of another source, or a block of a kind
	// this SDK version added: its JSON, as text.
	js, err := json.Marshal(c)
	if err != nil {
		return []toolmw.Part{toolmw.TextPart("[content block]")}
	}
	return []toolmw.Part{{Kind: toolmw.PartJSON, Text: string(js)}}
}

// imagePart returns an image source as an image part: its bytes, or its
// URL; a file id, or base64 that does not decode, as an image without
// either (a descriptor).
func imagePart(s anthropic.BetaImageBlockParamSourceUnion) toolmw.Part {
	switch {
	case s.OfBase64 != nil:
		data, err := base64.StdEncoding.DecodeString(s.OfBase64.Data)
		if err != nil {
			return toolmw.Part{Kind: toolmw.PartImage, MIMEType: string(s.OfBase64.MediaType)}
		}
		return toolmw.ImagePart(data, string(s.OfBase64.MediaType))
	case s.OfURL != nil:
		return toolmw.Part{Kind: toolmw.PartImage, URI: s.OfURL.URL}
	}
	return toolmw.Part{Kind: toolmw.PartImage}
}

// documentParts returns a document as a file part named by its title: a
// PDF's bytes or URL, a plain-text document's text, a content document of
// a string as a plain-text file; nil for any other source (a Files API
// file id, a content document of blocks).
func documentParts(d *anthropic.BetaRequestDocumentBlockParam) []toolmw.Part {
	title := d.Title.Value
	s := d.Source
	switch {
	case s.OfBase64 != nil:
		data, err := base64.StdEncoding.DecodeString(s.OfBase64.Data)
		if err != nil {
			return []toolmw.Part{{Kind: toolmw.PartFile, Name: title, MIMEType: "application/pdf"}}
		}
		return []toolmw.Part{toolmw.FilePart(title, "application/pdf", data)}
	case s.OfText != nil:
		return []toolmw.Part{toolmw.FilePart(title, "text/plain", []byte(s.OfText.Data))}
	case s.OfURL != nil:
		return []toolmw.Part{{Kind: toolmw.PartFile, Name: title, MIMEType: "application/pdf", URI: s.OfURL.URL}}
	case s.OfContent != nil && s.OfContent.Content.OfString.Valid():
		return []toolmw.Part{toolmw.FilePart(title, "text/plain", []byte(s.OfContent.Content.OfString.Value))}
	}
	return nil
}
