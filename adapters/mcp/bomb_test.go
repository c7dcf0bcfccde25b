package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	toolmcp "github.com/toolmw/toolmw/adapters/mcp"
	"github.com/toolmw/toolmw/taxonomy"
)

// TestRemoteSchemaBombRefused: a remote server chooses its tools' input
// schemas. One of 18 levels of anyOf over two $refs to the next level
// (1.2 KB; each call was validated for seconds, past any deadline) is
// refused when NewRemote lists it, as schema_too_costly, and the listing
// ends well within a deadline of 100 ms (the bound is measured under the
// deadline's own context, not a wall-clock assertion: NewRemote must end
// typed before it passes).
func TestRemoteSchemaBombRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","$ref":"#/$defs/d0","$defs":{`)
	for i := range 18 {
		fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	b.WriteString(`"d18":{"type":"string"}}}`)
	srv := newServer()
	srv.AddTool(&sdk.Tool{Name: "search", InputSchema: json.RawMessage(b.String())}, rawTool("x"))
	cs := connect(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	remote, err := toolmcp.NewRemote(ctx, cs)
	if remote != nil || taxonomy.InfoOf(err).Code != taxonomy.CodeSchemaTooCostly {
		t.Fatalf("NewRemote of a schema bomb: %v (%+v), want schema_too_costly", err, taxonomy.InfoOf(err))
	}
}
