package mcp_test

import (
	"context"
	"fmt"
	"os"

	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// Connect starts a local server in the sandbox of a workspace and lists
// the tools a model would be offered, each an action adapter for the
// toolbox. (The server here is this test binary, re-executed as an MCP
// server; in the settings it would be {"command": "npx", "args": [...]}.)
func ExampleConnect() {
	ctx := context.Background()
	exe, _ := os.Executable()
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	spec, _ := sandbox.Default(dir, "")

	client, err := mcp.Connect(ctx, mcp.Servers{"t": {Command: exe, Env: map[string]string{serverEnv: "go"}}},
		mcp.Options{Workspace: dir, Sandbox: spec})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	st := client.Status()[0]
	fmt.Println(st.Name, st.Transport, st.State)
	for _, t := range st.Tools[:4] {
		fmt.Printf("%s %s confirm=%v\n", t.Name, t.Capability, t.Confirm)
	}
	fmt.Println(len(client.Tools()), "tools for the toolbox")
	// Output:
	// t stdio connected
	// mcp__t__ask execute confirm=true
	// mcp__t__big execute confirm=true
	// mcp__t__crash execute confirm=true
	// mcp__t__drop execute confirm=true
	// 11 tools for the toolbox
}
