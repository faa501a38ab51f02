package stock_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
)

// meetHook is an after_tool hook's command: it marks that it started, and
// waits (at most 10 s) until three hooks have, then sleeps 300 ms and says
// who it is; alone, it says so and fails.
const meetHook = `["sh", "-c", "mkdir -p meet; touch meet/$0; n=0; while [ $(ls meet | wc -l) -lt 3 ]; do n=$((n+1)); [ $n -gt 200 ] && { echo ran alone >&2; exit 2; }; sleep 0.05; done; sleep 0.3; echo '{\"additionalContext\": \"said by '$0'\"}'"`

// A call's after_tool hooks are real processes run side by side: the three
// that wait to meet each other meet, though a hook declared between them
// hangs; that one is killed at its own timeout and recorded as a failure,
// and the four records are in declared order. The log verifies.
func TestAfterHooksProcessesTogether(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("a\n"), 0o644))
	xdg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "harness"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "harness", "config.json"), []byte(`{"hooks": {"after_tool": [
		{"name": "one", "argv": `+meetHook+`, "one"]},
		{"name": "hang", "argv": ["sh", "-c", "sleep 30"], "timeout": 2},
		{"name": "two", "argv": `+meetHook+`, "two"]},
		{"name": "three", "argv": `+meetHook+`, "three"]}]}}`), 0o644))
	getenv := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return os.Getenv(k)
	}
	p, err := stock.Locate(root, t.TempDir())
	require.NoError(t, err)
	l, err := p.LoadLayered(getenv)
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, store.Close()) })
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0), func(c *harness.Config) { c.Hooks = l.HookRecord() })
	require.NoError(t, err)
	s, err := stock.NewStock(p, cfg, stock.WithHooks(l.Hooks))
	require.NoError(t, err)
	script, err := model.ParseScript("hooks", []byte(`{"text": "reading", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a.txt\"}"}]}
{"text": "done"}
`))
	require.NoError(t, err)
	svc, err := s.Services(script, stock.BlobsOf(store))
	require.NoError(t, err)
	defer svc.Observer.(interface{ Close() error }).Close()
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(t, err)
	th := rt.Thread(s.Actor, "t")
	start := time.Now()
	_, err = th.Start(ctx, "Read it.")
	require.NoError(t, err)
	st, err := drive.Drive(ctx, th, drive.Options{})
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, st.Status, st.Reason)
	t.Logf("the thread took %s with a hook that hangs until its 2 s timeout", time.Since(start))

	var names []string
	var runs []facts.HookRan
	configured := false
	for f, err := range store.Read(ctx, "t", 0) {
		require.NoError(t, err)
		switch f.Kind {
		case facts.KindSystemConfigured:
			sc, err := facts.Decode[facts.SystemConfigured](f)
			require.NoError(t, err)
			configured = sc.AfterHooksTogether
		case facts.KindHookRan:
			r, err := facts.Decode[facts.HookRan](f)
			require.NoError(t, err)
			require.Equal(t, "hook/after_tool/1-r/0+3", f.Cause)
			names = append(names, r.Name)
			runs = append(runs, r)
		}
	}
	require.True(t, configured, "the rule is recorded")
	require.Equal(t, []string{"one", "hang", "two", "three"}, names, "recorded in declared order")
	for _, r := range runs {
		if r.Name == "hang" {
			require.Equal(t, facts.HookFailed, r.Decision)
			require.Contains(t, r.Reason, "timed out")
			continue
		}
		require.Equal(t, facts.HookAllow, r.Decision, "%s: %s %s", r.Name, r.Reason, r.Stderr)
		require.Equal(t, "said by "+r.Name, r.Context)
	}
	require.NoError(t, audit.VerifyLog(ctx, store, s.Actor, "t"))
}
