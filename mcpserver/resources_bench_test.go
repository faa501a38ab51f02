package mcpserver_test

import (
	"context"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcpserver"
)

// BenchmarkThreadResource reads a parked thread's state resource and, as
// the baseline in the same run, calls the view tool that gives the same
// document (with how to answer each request); it reports the ratio of
// their times per call (resource / tool).
func BenchmarkThreadResource(b *testing.B) {
	env := harnesstest.New(b, harnesstest.ToolScript)
	ws := workspace{env: env}
	ctx := context.Background()
	srv := mcpserver.NewServer(ws, mcpserver.ServerOptions{})
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverEnd, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "start", Arguments: map[string]any{"task": "Set the cache TTL to 300", "thread": "t1"}}); err != nil {
		b.Fatal(err)
	}
	// The baseline, in the same run: the view tool, the same number of
	// times.
	const n = 200
	t0 := time.Now()
	for range n {
		if r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "view", Arguments: map[string]any{"thread": "t1"}}); err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
	tool := float64(time.Since(t0).Nanoseconds()) / n
	b.ResetTimer()
	for b.Loop() {
		if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "harness://threads/t1"}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/tool, "resource/tool")
	b.ReportMetric(tool, "tool-ns/op")
}
