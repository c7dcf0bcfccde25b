package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolmw/toolmw"
	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/middleware"
)

// A screenshot tool that reports its progress and returns an image with a
// caption: the client gets a progress notification for its token, an
// image block and the caption wrapped as untrusted data. The tool sees no
// SDK type.
func ExampleAddTool_parts() {
	ctx := context.Background()
	png := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}
	screenshot := func(ctx context.Context, _ json.RawMessage) (toolmw.Result, error) {
		if err := toolmw.ReportProgress(ctx, 1, 2, "page rendered"); err != nil {
			return toolmw.Result{}, err
		}
		return toolmw.Parts(toolmw.ImagePart(png, "image/png"), toolmw.TextPart("the booking page")), nil
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "browser", Version: "1.0.0"}, nil)
	if err := toolmcp.AddTool(srv, toolmw.Spec{Name: "screenshot", Description: "Take a screenshot."},
		screenshot, middleware.Default().Middleware()); err != nil {
		fmt.Println(err)
		return
	}

	progress := make(chan string, 1)
	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1.0.0"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- fmt.Sprintf("%v: %v of %v, %s", req.Params.ProgressToken, req.Params.Progress, req.Params.Total, req.Params.Message)
		},
	})
	clientTransport, serverTransport := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverTransport, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()

	params := &sdk.CallToolParams{Name: "screenshot"}
	params.SetProgressToken("shot-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-progress)
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.ImageContent:
			fmt.Println("image", c.MIMEType, len(c.Data), "bytes")
		case *sdk.TextContent:
			fmt.Println("text", c.Text)
		}
	}
	// Output:
	// shot-1: 1 of 2, page rendered
	// image image/png 8 bytes
	// text <untrusted-data source="tool_result">the booking page</untrusted-data>
}
