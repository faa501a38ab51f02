package stock_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// hookCalls is how many tool calls each thread of BenchmarkHookBeforeTool
// makes.
const hookCalls = 10

// hookBench is a workspace's stock harness with the user's settings
// given by userJSON ("" for none), on its own store.
func hookBench(b *testing.B, root, userJSON string) (*stock.Stock, thread.Store, harness.Config) {
	xdg := b.TempDir()
	if userJSON != "" {
		require.NoError(b, os.MkdirAll(filepath.Join(xdg, "harness"), 0o755))
		require.NoError(b, os.WriteFile(filepath.Join(xdg, "harness", "config.json"), []byte(userJSON), 0o644))
	}
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return os.Getenv(k)
	}
	store := b.TempDir()
	p, err := stock.Locate(root, store)
	require.NoError(b, err)
	l, err := p.LoadLayered(getenv)
	require.NoError(b, err)
	st, err := p.OpenStore(context.Background(), 0, true)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, st.Close()) })
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), func(c *harness.Config) { c.Hooks = l.HookRecord() })
	require.NoError(b, err)
	s, err := stock.NewStock(p, cfg, stock.WithHooks(l.Hooks))
	require.NoError(b, err)
	return s, st, cfg
}

// hookRun drives a thread of one model turn of hookCalls reads (asked of
// nobody) and a last turn, and returns the time it took and its facts.
func hookRun(b *testing.B, s *stock.Stock, store thread.Store, cfg harness.Config, id string) (time.Duration, []facts.Fact) {
	ctx := context.Background()
	calls := make([]string, hookCalls)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"id": "r%d", "name": "read_file", "args": "{\"path\":\"a.txt\"}"}`, i)
	}
	script, err := model.ParseScript("hooks", []byte(`{"text": "reading", "tool_calls": [`+strings.Join(calls, ", ")+`]}`+"\n"+`{"text": "done"}`+"\n"))
	require.NoError(b, err)
	svc, err := s.Services(script, stock.BlobsOf(store))
	require.NoError(b, err)
	defer svc.Observer.(interface{ Close() error }).Close()
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(b, err)
	start := time.Now()
	th := rt.Thread(s.Actor, id)
	_, err = th.Start(ctx, "Read it.")
	require.NoError(b, err)
	st, err := drive.Drive(ctx, th, drive.Options{})
	require.NoError(b, err)
	took := time.Since(start)
	require.Equal(b, harness.StatusDone, st.Status, st.Reason)
	var fs []facts.Fact
	for f, err := range store.Read(ctx, id, 0) {
		require.NoError(b, err)
		fs = append(fs, f)
	}
	return took, fs
}

// BenchmarkHookBeforeTool is what a trivial before_tool hook (sh -c true,
// in the sandbox) adds to each tool call, against the start of that same
// process: ratio is (a call with the hook − a call without) over one
// sandboxed sh -c true, all measured in the same run (aim: ≤ 1 — the
// hooks of the turn's calls run side by side, their records appended
// together, so a call pays less than one process's start).
// ratio-plain sets the same cost against an unsandboxed sh -c true.
func BenchmarkHookBeforeTool(b *testing.B) {
	root := b.TempDir()
	require.NoError(b, os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644))
	plainS, plainStore, plainCfg := hookBench(b, root, "")
	hookS, hookStore, hookCfg := hookBench(b, root, `{"hooks": {"before_tool": [{"name": "t", "command": "true"}]}}`)
	_, fs := hookRun(b, hookS, hookStore, hookCfg, "warm")
	ran := 0
	for _, f := range fs {
		if f.Kind == facts.KindHookRan {
			p, err := facts.Decode[facts.HookRan](f)
			require.NoError(b, err)
			require.Equal(b, facts.HookAllow, p.Decision, p.Reason)
			ran++
		}
	}
	require.Equal(b, hookCalls, ran, "a hook run per call")
	hookRun(b, plainS, plainStore, plainCfg, "warm")
	var with, without, sandboxed, plain time.Duration
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("t%d", i)
		d, _ := hookRun(b, hookS, hookStore, hookCfg, id)
		with += d
		d, _ = hookRun(b, plainS, plainStore, plainCfg, id)
		without += d
		for range hookCalls {
			start := time.Now()
			x, err := hookS.Hooks.RunHook(context.Background(), hookCfg.Hooks[0], []byte("{}"))
			sandboxed += time.Since(start)
			require.NoError(b, err)
			require.Equal(b, 0, x.Code, x.Failure)
			start = time.Now()
			require.NoError(b, exec.Command("sh", "-c", "true").Run())
			plain += time.Since(start)
		}
	}
	added := float64(with-without) / float64(b.N*hookCalls)
	b.ReportMetric(added/float64(time.Millisecond), "added-ms/call")
	b.ReportMetric(float64(sandboxed)/float64(b.N*hookCalls)/float64(time.Millisecond), "sh-true-sandboxed-ms")
	b.ReportMetric(added/(float64(sandboxed)/float64(b.N*hookCalls)), "ratio")
	b.ReportMetric(added/(float64(plain)/float64(b.N*hookCalls)), "ratio-plain")
}
