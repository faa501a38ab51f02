package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// BenchmarkMCPServeHTTP is a tool call (view: the store opened, the
// thread folded, its state) through harness mcp serve --http against the
// same call through harness mcp serve on stdio, in the same run, one
// after the other: ns/call of each and the ratio HTTP / stdio.
func BenchmarkMCPServeHTTP(b *testing.B) {
	bin, dir, _, store := benchWorkspace(b)
	require.NoError(b, store.Close())
	require.NoError(b, os.WriteFile(filepath.Join(dir, "script.jsonl"), []byte(`{"text": "Done."}`+"\n"), 0o644))
	cmd := exec.Command(bin, "mcp", "serve", "--model", "scripted:script.jsonl")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "USER=tester")
	ctx := context.Background()
	stdio, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(b, err)
	defer stdio.Close()
	url, token := serveHTTP(b, dir, "--model", "scripted:script.jsonl")
	web := httpClient(b, url, token)

	res, err := stdio.CallTool(ctx, &sdk.CallToolParams{Name: "start", Arguments: map[string]any{"task": "Nothing"}})
	require.NoError(b, err)
	require.False(b, res.IsError)
	view := &sdk.CallToolParams{Name: "view", Arguments: map[string]any{"thread": "t1"}}
	call := func(cs *sdk.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, view)
		d := time.Since(start)
		require.NoError(b, err)
		require.False(b, res.IsError)
		return d
	}
	call(stdio) // both warm
	call(web)
	var overStdio, overHTTP time.Duration
	b.ResetTimer()
	for range b.N {
		overStdio += call(stdio)
		overHTTP += call(web)
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(overStdio.Nanoseconds())/n, "ns/call-stdio")
	b.ReportMetric(float64(overHTTP.Nanoseconds())/n, "ns/call-http")
	b.ReportMetric(float64(overHTTP)/float64(overStdio), "http/stdio")
}
