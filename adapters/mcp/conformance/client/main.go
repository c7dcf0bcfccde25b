// Command client is a conformance client for the official MCP conformance
// suite (npm @modelcontextprotocol/conformance), built only from the
// public API of toolmcp: the tools of the suite's server are a Remote
// ([toolmcp.NewRemote]) in a toolbox, called as an agent calls them, with
// the client made by [toolmcp.ClientOptions] so that what the server asks
// during a call reaches the call's toolmw.Session.
//
// The suite runs it as `client <server-url>`, the scenario in
// MCP_CONFORMANCE_SCENARIO and, for some, what the client is told in
// MCP_CONFORMANCE_CONTEXT (a JSON object: pre-registered credentials, a
// private key, an identity provider's token):
//
//	npx @modelcontextprotocol/conformance client --command "go run ./conformance/client" --scenario tools_call
//
// Scenarios: initialize, tools_call, elicitation-sep1034-client-defaults,
// sse-retry, and the auth/* ones. Those test the OAuth flows of the
// transport, which toolmcp leaves to the caller: the client configures them
// as a user of the go-sdk does, with an OAuth handler on the
// StreamableClientTransport (see auth.go), and then lists and calls the
// server's test-tool through toolmcp as in the other scenarios.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
)

// scenarios maps a scenario to the tool it calls and the arguments ("" for
// none: the scenario only lists the tools).
var scenarios = map[string]struct{ tool, args string }{
	"initialize":                          {},
	"tools_call":                          {"add_numbers", `{"a":5,"b":3}`},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults", `{}`},
	"sse-retry":                           {"test_reconnection", `{}`},
}

// authTool is the tool every auth/* scenario's server has, and the client
// calls once authorized.
const authTool = "test-tool"

func main() {
	if len(os.Args) != 2 {
		log.Fatalf("usage: %s <server-url> (the scenario in MCP_CONFORMANCE_SCENARIO)", os.Args[0])
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	sc, ok := scenarios[name]
	if strings.HasPrefix(name, "auth/") {
		sc, ok = struct{ tool, args string }{authTool, `{}`}, true
	}
	if !ok {
		log.Fatalf("scenario %q is not one this client runs", name)
	}
	told, err := readContext(os.Getenv("MCP_CONFORMANCE_CONTEXT"))
	if err != nil {
		log.Fatalf("scenario %s: %v", name, err)
	}
	transport := &mcp.StreamableClientTransport{Endpoint: os.Args[1]}
	if strings.HasPrefix(name, "auth/") {
		if transport.OAuthHandler, err = oauthHandler(name, told); err != nil {
			log.Fatalf("scenario %s: %v", name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := run(ctx, transport, sc.tool, sc.args); err != nil {
		log.Fatalf("scenario %s: %v", name, err)
	}
}

func run(ctx context.Context, transport *mcp.StreamableClientTransport, tool, args string) error {
	client := mcp.NewClient(&mcp.Implementation{Name: "toolmw-conformance-client", Version: "1.0.0"}, toolmcp.ClientOptions(nil))
	cs, err := client.Connect(ctx, toolmcp.LimitTransport(transport, 0), nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	remote, err := toolmcp.NewRemote(ctx, cs)
	if err != nil {
		return fmt.Errorf("list the tools: %w", err)
	}
	if tool == "" {
		return nil
	}
	box, err := remote.Toolbox()
	if err != nil {
		return err
	}
	// The user of this call accepts every question with the defaults the
	// server's schema gives (an empty answer): what SEP-1034 asks a client
	// to fill in is the server's to apply.
	ctx = toolmw.WithSession(ctx, user{})
	res, err := box.Call(toolmw.WithCallID(ctx, "conformance-1"), toolmcp.ModelName(tool), json.RawMessage(args))
	if err != nil {
		return fmt.Errorf("call %s: %s", tool, toolmw.ForModel(res, err))
	}
	fmt.Println(toolmw.ForModel(res, nil))
	return nil
}

// user is the Session of the calls: it shows progress and log lines on
// stderr, accepts every question with an empty answer, and cannot sample.
type user struct{}

func (user) Progress(_ context.Context, p toolmw.Progress) error {
	log.Printf("progress %v/%v %s", p.Progress, p.Total, p.Message)
	return nil
}

func (user) Log(_ context.Context, l toolmw.LogLine) error {
	log.Printf("log %s %s %v", l.Level, l.Logger, l.Data)
	return nil
}

func (user) Elicit(_ context.Context, q toolmw.Elicitation) (toolmw.ElicitResult, error) {
	return toolmw.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
}

func (user) Sample(context.Context, toolmw.SampleRequest) (toolmw.SampleResult, error) {
	return toolmw.SampleResult{}, toolmw.ErrSessionUnsupported
}
