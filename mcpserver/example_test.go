package mcpserver_test

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/mcpserver"
)

// NewServer is harness as an MCP server; here a client lists its tools
// over an in-memory connection (harness mcp serve speaks it on stdio).
func ExampleNewServer() {
	ctx := context.Background()
	srv := mcpserver.NewServer(nil, mcpserver.ServerOptions{})
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "example", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(tool.Name)
	}
	// Output:
	// answer
	// facts
	// plan
	// replay
	// resume
	// start
	// stop
	// view
}
