package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/mcpserver"
)

// The answer tool's yes-or-no arguments (drive.YesNo, no *bool) are JSON
// booleans or null in its schema, as a client is told, and a string
// there is refused before the tool runs.
func TestAnswerSchemaYesNo(t *testing.T) {
	ctx := context.Background()
	srv := mcpserver.NewServer(nil, mcpserver.ServerOptions{})
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)
	defer cs.Close()
	var schema map[string]any
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		if tool.Name == "answer" {
			b, err := json.Marshal(tool.InputSchema)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &schema))
		}
	}
	props := schema["properties"].(map[string]any)
	for _, name := range []string{"approve", "resume"} {
		require.Equal(t, []any{"null", "boolean"}, props[name].(map[string]any)["type"], name)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "answer", Arguments: map[string]any{"thread": "t1", "request_id": "1-a", "approve": "yes"}})
	if err == nil {
		require.True(t, res.IsError, "a string where a yes or no goes is refused")
	}
}
