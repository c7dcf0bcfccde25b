// Command server is the MCP server the official conformance suite
// (@modelcontextprotocol/conformance) tests, built from toolmw tools alone:
// each tool is a toolmw.Tool behind the default stack, published with
// adapters/mcp's AddToolbox, and reaches the client only through
// toolmw.Result's parts and the call's toolmw.Session. No handler here
// sees an SDK type. scripts/mcp-conformance builds and runs it.
//
//	server -addr 127.0.0.1:0   # prints "serving http://127.0.0.1:PORT/mcp", then serves streamable HTTP there
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/middleware"
	"github.com/toolmw/toolmw/taxonomy"
)

// The test media the suite expects: a 1×1 red PNG and a silent WAV.
const (
	imageBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	audioBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "the address to serve streamable HTTP on (path /mcp); port 0 picks a free one")
	flag.Parse()

	srv := sdk.NewServer(&sdk.Implementation{Name: "toolmw-conformance-server", Version: "1.0.0"}, nil)
	srv.AddReceivingMiddleware(toolmcp.ProtocolErrors())
	box, err := toolbox()
	if err != nil {
		log.Fatal(err)
	}
	if err := toolmcp.AddToolbox(srv, box); err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// The script reads the URL from this line (the port may be chosen here).
	fmt.Printf("serving http://%s/mcp\n", ln.Addr())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(hs.Serve(ln))
}

// tool is one tool of the server: its spec and the tool.
type tool struct {
	spec toolmw.Spec
	run  toolmw.Tool
}

// toolbox returns the tools the suite's server scenarios call, behind
// the default stack.
func toolbox() (*toolmw.Toolbox, error) {
	box := toolmw.NewToolbox(middleware.Default().Middleware())
	for _, t := range tools() {
		if err := box.Register(t.spec, t.run); err != nil {
			return nil, fmt.Errorf("%s: %w", t.spec.Name, err)
		}
	}
	return box, nil
}

func tools() []tool {
	image, _ := base64.StdEncoding.DecodeString(imageBase64)
	audio, _ := base64.StdEncoding.DecodeString(audioBase64)
	return []tool{
		{spec("test_simple_text", "Tests simple text content response"),
			answer(toolmw.Text("This is a simple text response for testing."))},
		{spec("test_image_content", "Tests image content response"),
			answer(toolmw.Parts(toolmw.ImagePart(image, "image/png")))},
		{spec("test_audio_content", "Tests audio content response"),
			answer(toolmw.Parts(toolmw.AudioPart(audio, "audio/wav")))},
		{spec("test_embedded_resource", "Tests embedded resource content response"),
			answer(toolmw.Parts(toolmw.ResourcePart("test://embedded-resource", "text/plain", "This is an embedded resource")))},
		{spec("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)"),
			answer(toolmw.Parts(
				toolmw.TextPart("This is text content"),
				toolmw.ImagePart(image, "image/png"),
				toolmw.ResourcePart("test://embedded-in-multiple", "text/plain", "This is an embedded resource"),
			))},
		{spec("test_tool_with_logging", "Tests tool that emits log messages during execution"), withLogging},
		{spec("test_tool_with_progress", "Tests tool that reports progress notifications"), withProgress},
		{spec("test_error_handling", "Tests error response handling"), failing},
		{specWith("test_sampling", "Tests server-initiated sampling (LLM completion request)",
			`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}`), sampling},
		{specWith("test_elicitation", "Tests server-initiated elicitation (user input request)",
			`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}`), elicitation},
		{spec("test_elicitation_sep1034_defaults", "Tests elicitation with default values per SEP-1034"),
			ask("Test defaults for primitives", defaultsSchema)},
		{spec("test_elicitation_sep1330_enums", "Tests elicitation with enum schema improvements per SEP-1330"),
			ask("Test enum schemas", enumsSchema)},
		{specWith("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)",
			schema202012), echoArgs},
	}
}

func spec(name, description string) toolmw.Spec {
	return toolmw.Spec{Name: name, Description: description}
}

func specWith(name, description, inputSchema string) toolmw.Spec {
	return toolmw.Spec{Name: name, Description: description, InputSchema: json.RawMessage(inputSchema)}
}

// answer is a tool that returns res.
func answer(res toolmw.Result) toolmw.Tool {
	return func(context.Context, json.RawMessage) (toolmw.Result, error) { return res, nil }
}

func withLogging(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	for _, line := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if err := toolmw.LogToClient(ctx, "info", line); err != nil {
			return toolmw.Result{}, err
		}
	}
	return toolmw.Text("Tool with logging executed successfully"), nil
}

func withProgress(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
	const total = 100
	for _, done := range []float64{0, 50, 100} {
		if err := toolmw.ReportProgress(ctx, done, total, fmt.Sprintf("Completed step %.0f of %d", done, total)); err != nil {
			return toolmw.Result{}, err
		}
	}
	return toolmw.Text("Tool with progress executed successfully"), nil
}

func failing(context.Context, json.RawMessage) (toolmw.Result, error) {
	return toolmw.Result{}, taxonomy.Failure("intentional_error", "This tool intentionally returns an error for testing")
}

func sampling(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	var in struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return toolmw.Result{}, err
	}
	out, err := toolmw.Sample(ctx, toolmw.SampleRequest{
		Messages:  []toolmw.SampleMessage{{Role: "user", Text: in.Prompt}},
		MaxTokens: 100,
	})
	if err != nil {
		return toolmw.Result{}, err
	}
	return toolmw.Text("LLM response: " + out.Text), nil
}

func elicitation(ctx context.Context, args json.RawMessage) (toolmw.Result, error) {
	var in struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return toolmw.Result{}, err
	}
	return ask(in.Message, usernameSchema)(ctx, args)
}

// ask is a tool that asks the user message with schema, and returns the
// answer.
func ask(message, schema string) toolmw.Tool {
	return func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		ans, err := toolmw.Elicit(ctx, toolmw.Elicitation{Message: message, Schema: json.RawMessage(schema)})
		if err != nil {
			return toolmw.Result{}, err
		}
		return toolmw.Text("Elicitation result: action=" + ans.Action + ", content=" + describe(ans.Content)), nil
	}
}

// describe renders an answer's content with its keys in order.
func describe(content map[string]any) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(content)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%v", k, content[k])
	}
	b.WriteByte('}')
	return b.String()
}

func echoArgs(_ context.Context, args json.RawMessage) (toolmw.Result, error) {
	if !json.Valid(args) {
		return toolmw.Result{}, errors.New("invalid arguments")
	}
	return toolmw.Text("JSON Schema 2020-12 tool called with: " + string(args)), nil
}

const usernameSchema = `{"type":"object","properties":{"username":{"type":"string","description":"Your preferred username"}},"required":["username"]}`

const defaultsSchema = `{"type":"object","properties":{
	"name":{"type":"string","description":"User name","default":"John Doe"},
	"age":{"type":"integer","description":"User age","default":30},
	"score":{"type":"number","description":"User score","default":95.5},
	"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
	"verified":{"type":"boolean","description":"Verification status","default":true}}}`

const enumsSchema = `{"type":"object","properties":{
	"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
	"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
	"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
	"untitledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
	"titledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","anyOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]}}}}`

const schema202012 = `{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type": "object",
	"$defs": {
		"address": {
			"$anchor": "addressDef",
			"type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}
		}
	},
	"properties": {
		"name": {"type": "string"},
		"address": {"$ref": "#/$defs/address"},
		"contactMethod": {"type": "string", "enum": ["phone", "email"]},
		"phone": {"type": "string"},
		"email": {"type": "string"}
	},
	"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
	"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
	"then": {"required": ["phone"]},
	"else": {"required": ["email"]},
	"additionalProperties": false
}`
