package mcp

import (
	"runtime"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw/taxonomy"
)

func TestRemoteResultBounds(t *testing.T) {
	half := make([]byte, MaxRemotePartBytes-1024)
	for name, c := range map[string]struct {
		res  *sdk.CallToolResult
		code string
	}{
		"part": {&sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, MaxRemotePartBytes+1)}}}, taxonomy.CodeResultTooLarge},
		"total": {&sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ImageContent{MIMEType: "image/png", Data: half}, &sdk.AudioContent{MIMEType: "audio/wav", Data: half},
			&sdk.ImageContent{MIMEType: "image/png", Data: half}}}, taxonomy.CodeResultTooLarge},
		"text":       {&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", MaxRemotePartBytes+1)}}}, taxonomy.CodeResultTooLarge},
		"structured": {&sdk.CallToolResult{StructuredContent: map[string]any{"x": strings.Repeat("x", MaxRemotePartBytes)}}, taxonomy.CodeResultTooLarge},
		"structured_total": {&sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: half}, &sdk.ImageContent{MIMEType: "image/png", Data: half}},
			StructuredContent: map[string]any{"x": strings.Repeat("x", 4096)}}, taxonomy.CodeResultTooLarge},
		"blob":        {&sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "u:x", Blob: make([]byte, MaxRemotePartBytes)}}}}, taxonomy.CodeResultTooLarge},
		"null":        {&sdk.CallToolResult{Content: []sdk.Content{nil}}, taxonomy.CodeResultPartInvalid},
		"no_resource": {&sdk.CallToolResult{Content: []sdk.Content{&sdk.EmbeddedResource{}}}, taxonomy.CodeResultPartInvalid},
		//lint:ignore SA1019 a sampling block is what a tool result may not hold
		"foreign_kind": {&sdk.CallToolResult{Content: []sdk.Content{&sdk.ToolUseContent{ID: "x", Name: "y"}}}, taxonomy.CodeResultPartInvalid},
		"bad_utf8_uri": {&sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "u:\xff"}}}, taxonomy.CodeResultPartInvalid},
		"bad_res_mime": {&sdk.CallToolResult{Content: []sdk.Content{&sdk.ResourceLink{URI: "u:x", MIMEType: "text/plain; charset"}}}, taxonomy.CodeResultPartInvalid},
	} {
		res, err := remoteResult(c.res)
		info := taxonomy.InfoOf(err)
		if info.Kind != taxonomy.KindResultInvalid || info.Code != c.code || info.Retryable || res.Size() != 0 {
			t.Errorf("%s: %+v, %+v", name, res, info)
		}
	}
}

// TestRemoteResultNoCopy: what remoteResult allocates does not grow with
// the bytes of the result, refused or kept: the bytes are checked before
// anything is kept, and a kept part shares the decoded bytes.
func TestRemoteResultNoCopy(t *testing.T) {
	over := &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 4*MaxRemotePartBytes)}}}
	within := &sdk.CallToolResult{Content: []sdk.Content{&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, MaxRemotePartBytes)}}}
	for name, res := range map[string]*sdk.CallToolResult{"over": over, "within": within} {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		_, _ = remoteResult(res)
		runtime.ReadMemStats(&m1)
		if n := m1.TotalAlloc - m0.TotalAlloc; n > 64<<10 {
			t.Errorf("%s: allocated %d bytes", name, n)
		}
	}
}

func TestValidMIME(t *testing.T) {
	for s, want := range map[string]bool{
		"image/png": true, "text/plain; charset=utf-8": true, `text/plain;charset="utf-8"`: true,
		"application/vnd.api+json": true, "audio/wav;rate=8000;channels=1": true,
		"": false, "image": false, "image/": false, "/png": false, "image/png/x": false,
		"image/png\r\nX: y": false, "image/p ng": false, "text/plain; charset": false,
		`text/plain; a="unterminated`: false, "text/plain;": false, "imäge/png": false,
		strings.Repeat("a", 200) + "/" + strings.Repeat("b", 60): false,
	} {
		if validMIME(s) != want {
			t.Errorf("validMIME(%q) = %v", s, !want)
		}
	}
}
