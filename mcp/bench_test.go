package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/sandbox"
)

// BenchmarkCall: one call of the test server's echo tool over stdio,
// made directly with the go-sdk client (the baseline), through the
// effect boundary (the MCP adapter run by action.Boundary with the
// workspace observer looking before and after, in a 200-file workspace;
// without and with the change feed: feed-ratio),
// and as a step of a thread (the call requested, started, completed and
// shown to the model: the facts appended and synced to a Pebble store,
// with the model turns around it, scripted). Ratios are against the
// direct call, measured in the same run. Beside them, to tell the
// sandbox's share from the adapter's: the go-sdk client to the server
// in the same sandbox (sandboxed-direct-ratio-med) and the adapter's
// Execute without the boundary (adapter-ratio-med).
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	for i := range 200 {
		dir := filepath.Join(root, fmt.Sprintf("d%02d", i%10))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", i)), []byte(fmt.Sprintf("package p // %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}

	// The baseline: the SDK's own client, the server as a plain child.
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), serverEnv+"=go")
	cmd.Dir = root
	session, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer session.Close()

	// Through the boundary: the harness's client, the server in the sandbox.
	spec, err := sandbox.Default(root, "")
	if err != nil {
		b.Fatal(err)
	}
	srv := mcp.Server{Command: exe, Env: map[string]string{serverEnv: "go"}, Trusted: true}
	// Each way of calling has a server process of its own: a server
	// called just before answers faster than one that sat idle (its
	// threads are still awake), so every server is called once a round.
	connect := func() harness.ToolAdapter {
		client, err := mcp.Connect(ctx, mcp.Servers{"t": srv}, mcp.Options{Workspace: root, Sandbox: spec})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { client.Close() })
		if st := client.Status()[0]; st.State != mcp.Connected {
			b.Fatal(st.Error)
		}
		for _, t := range client.Tools() {
			if t.Name() == "mcp__t__echo" {
				return t
			}
		}
		b.Fatal("no echo tool")
		return nil
	}
	echo, echoFeed, echoAlone := connect(), connect(), connect()
	ws, err := action.NewWorkspace(root, action.WithRacyWindow(50*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	time.Sleep(100 * time.Millisecond) // the files age out of the racy window
	bd := &action.Boundary{Observer: ws, Granted: []action.Capability{action.Read, action.Execute}, Root: root}
	// The same with the change feed on, as the CLI and serve observe.
	wsFeed, err := action.NewWorkspace(root, action.WithRacyWindow(50*time.Millisecond), action.WithChangeFeed(true))
	if err != nil {
		b.Fatal(err)
	}
	defer wsFeed.Close()
	bdFeed := &action.Boundary{Observer: wsFeed, Granted: bd.Granted, Root: root}
	// The SDK's client again, to a server in the same sandbox: what the
	// sandbox alone costs a call, beside what the adapter adds.
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	boxedSpec := spec.Clone()
	boxedSpec.Env = append(boxedSpec.Env, serverEnv)
	boxed := &sandbox.Cmd{Spec: boxedSpec, Line: exe, Env: append(os.Environ(), serverEnv+"=go"), Stdin: inR, Stdout: outW}
	if err := boxed.Start(ctx); err != nil {
		b.Fatal(err)
	}
	inR.Close()
	outW.Close()
	defer func() { boxed.Kill(); _, _ = boxed.Wait() }()
	boxedSession, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer boxedSession.Close()
	args := `{"text":"hi"}`
	schema := echo.Schema()
	req := action.Request{ActionID: "a", Capability: echo.Capability(), Adapter: echo.Name(), Payload: json.RawMessage(args),
		MCP: echo.(interface {
			MCPCall(string, *facts.ToolSchema) *facts.MCPCall
		}).MCPCall(args, &schema)}
	for _, w := range []*action.Workspace{ws, wsFeed} {
		if _, err := w.Observe(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if on, why := wsFeed.Feed(); !on {
		b.Fatalf("no change feed: %v", why)
	}

	// A thread whose turns alternate: a call of echo, then text.
	var script strings.Builder
	for range b.N + 1 {
		script.WriteString(`{"text": "calling", "tool_calls": [{"id": "e", "name": "mcp__t__echo", "args": "{\"text\":\"hi\"}"}]}` + "\n")
		script.WriteString(`{"text": "ok"}` + "\n")
	}
	e := newBenchEnv(b, root, srv, script.String())
	th := e.rt.Thread(e.st.Actor, "bench")
	if out, err := th.Start(ctx, "go"); err != nil || out.Status != harness.StatusDone {
		b.Fatalf("%v %v", out.Status, err)
	}
	msg, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: "again"})
	if err != nil {
		b.Fatal(err)
	}

	b.ResetTimer()
	callOn := func(session *sdk.ClientSession) func() {
		return func() {
			res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: json.RawMessage(args)})
			if err != nil || res.IsError {
				b.Fatal(err)
			}
		}
	}
	call := callOn(session)
	adapter := func() {
		r, err := echoAlone.Execute(ctx, req)
		if err != nil || r.Status != facts.StatusSucceeded {
			b.Fatal(r.Error, err)
		}
	}
	through := func(bd *action.Boundary, echo harness.ToolAdapter) func() {
		return func() {
			bg, refused := bd.Begin(ctx, req)
			if refused != nil {
				b.Fatal(refused.Report.Error)
			}
			done := *bd.Finish(ctx, req, bg, echo).Completed
			if done.Report.Status != facts.StatusSucceeded || done.EffectState != facts.EffectNone {
				b.Fatalf("%s %s", done.Report.Error, done.EffectState)
			}
		}
	}
	// The three are interleaved, call by call, so that a change of the
	// machine's load weighs on each alike.
	var directs, boundeds, feeds, boxeds, adapters []time.Duration
	for range b.N {
		for _, m := range []struct {
			f   func()
			out *[]time.Duration
		}{{call, &directs}, {through(bd, echo), &boundeds}, {through(bdFeed, echoFeed), &feeds}, {callOn(boxedSession), &boxeds}, {adapter, &adapters}} {
			start := time.Now()
			m.f()
			*m.out = append(*m.out, time.Since(start))
		}
	}
	direct, bounded, feedBounded := mean(directs), mean(boundeds), mean(feeds)
	i := 0
	threaded := measure(b.N, func() {
		i++
		if _, err := th.Post(ctx, msg, fmt.Sprintf("again-%d", i)); err != nil {
			b.Fatal(err)
		}
		if out, err := th.Resume(ctx); err != nil || out.Status != harness.StatusDone {
			b.Fatalf("%v %v", out.Status, err)
		}
	})
	b.StopTimer()
	b.ReportMetric(direct/1e3, "direct-µs/call")
	b.ReportMetric(bounded/1e3, "boundary-µs/call")
	b.ReportMetric(threaded/1e3, "thread-µs/call")
	b.ReportMetric(bounded/direct, "ratio")
	b.ReportMetric(feedBounded/1e3, "boundary-feed-µs/call")
	b.ReportMetric(feedBounded/direct, "feed-ratio")
	b.ReportMetric(median(boundeds)/median(directs), "ratio-med")
	b.ReportMetric(median(feeds)/median(directs), "feed-ratio-med")
	// The spread: each round's call with the feed over that round's
	// direct call.
	rounds := make([]float64, len(feeds))
	for i := range feeds {
		rounds[i] = float64(feeds[i]) / float64(max(directs[i], 1))
	}
	slices.Sort(rounds)
	b.ReportMetric(rounds[0], "feed-round-ratio-min")
	b.ReportMetric(rounds[len(rounds)/2], "feed-round-ratio-med")
	b.ReportMetric(rounds[len(rounds)-1], "feed-round-ratio-max")
	b.ReportMetric(threaded/direct, "thread-ratio")
	b.ReportMetric(median(boxeds)/median(directs), "sandboxed-direct-ratio-med")
	b.ReportMetric(median(adapters)/median(directs), "adapter-ratio-med")
}

// mean is the mean of ds, in ns.
func mean(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum) / float64(max(len(ds), 1))
}

// median is the median of ds, in ns.
func median(ds []time.Duration) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	return float64(s[len(s)/2])
}

func measure(n int, f func()) float64 {
	start := time.Now()
	for range n {
		f()
	}
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// newBenchEnv is newEnv for a benchmark.
func newBenchEnv(b *testing.B, root string, srv mcp.Server, script string) *env {
	e := &env{root: root}
	ctx := context.Background()
	var err error
	if e.place, err = locate(root); err != nil {
		b.Fatal(err)
	}
	if e.store, err = e.place.OpenStore(ctx, 10*time.Second, true); err != nil {
		b.Fatal(err)
	}
	cfg, err := harness.NewConfig(harness.WithModelName("scripted"))
	if err != nil {
		b.Fatal(err)
	}
	if e.st, err = newStock(e.place, cfg, mcp.Servers{"t": srv}); err != nil {
		b.Fatal(err)
	}
	m, err := model.ParseScript("script", []byte(script))
	if err != nil {
		b.Fatal(err)
	}
	svc, err := e.st.Services(m, blobsOf(e.store))
	if err != nil {
		b.Fatal(err)
	}
	if e.rt, err = harness.NewRuntime(e.store, svc, e.st.Config); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.close)
	return e
}
