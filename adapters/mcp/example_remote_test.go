package mcp_test

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
)

// progressPrinter is the toolmw.Session of the caller: a toolmw server
// gives its tools one; here it prints what reaches it.
type progressPrinter struct{ toolmw.Session }

func (progressPrinter) Progress(_ context.Context, p toolmw.Progress) error {
	fmt.Printf("progress %v/%v\n", p.Progress, p.Total)
	return nil
}

// A remote tool's screenshot is kept as an image part, and the progress the
// server reports during the call reaches the caller's Session, with a
// client made by ClientOptions.
func ExampleClientOptions() {
	ctx := context.Background()
	srv := sdk.NewServer(&sdk.Implementation{Name: "screens", Version: "1.0.0"}, nil)
	srv.AddTool(&sdk.Tool{Name: "screenshot", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2})
			}
			// A request after the notification: the client has handled it
			// when this returns.
			_ = req.Session.Ping(ctx, nil)
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "the login page"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG...")},
			}}, nil
		})
	ct, st := sdk.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, st, nil)
	defer ss.Close()
	client := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1.0.0"}, toolmcp.ClientOptions(nil))
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	remote, err := toolmcp.NewRemote(ctx, cs)
	if err != nil {
		fmt.Println(err)
		return
	}
	box, _ := remote.Toolbox()
	res, err := box.Call(toolmw.WithSession(ctx, progressPrinter{}), "screenshot", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range res.Parts() {
		fmt.Println(p.Describe())
	}
	// Output:
	// progress 1/2
	// text 14 bytes
	// image image/png 16 bytes
}
