package stock_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

func TestLocate(t *testing.T) {
	mk := func(t *testing.T, dirs ...string) string {
		root := t.TempDir()
		for _, d := range dirs {
			require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
		}
		return root
	}
	cases := []struct {
		name      string
		dirs      []string
		from      string
		override  string
		wantRoot  string
		wantStore string
	}{
		{"a store above wins", []string{"repo/.git", "repo/svc/.harness/db", "repo/svc/pkg/x"}, "repo/svc/pkg/x", "", "repo/svc", "repo/svc/.harness"},
		{"no store: the git root", []string{"repo/.git", "repo/pkg/x"}, "repo/pkg/x", "", "repo", "repo/.harness"},
		{"no store, no git: here", []string{"plain/sub"}, "plain/sub", "", "plain/sub", "plain/sub/.harness"},
		{"an override names the store, relative to here", []string{"repo/.git", "repo/pkg"}, "repo/pkg", "../elsewhere", "repo", "repo/elsewhere"},
		{"an empty .harness above a repository does not capture it", []string{"home/.harness", "home/repo/.git", "home/repo/pkg"}, "home/repo/pkg", "", "home/repo", "home/repo/.harness"},
		{"a store above a repository does not capture it", []string{"home/.harness/db", "home/repo/.git", "home/repo/pkg"}, "home/repo/pkg", "", "home/repo", "home/repo/.harness"},
		{"a .harness without a db is no store", []string{"home/.harness", "home/plain/sub"}, "home/plain/sub", "", "home/plain/sub", "home/plain/sub/.harness"},
		{"a store above, no repository between", []string{"home/.harness/db", "home/plain/sub"}, "home/plain/sub", "", "home", "home/.harness"},
		{"the repository's own store", []string{"repo/.git", "repo/.harness/db", "repo/pkg"}, "repo/pkg", "", "repo", "repo/.harness"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := mk(t, tc.dirs...)
			p, err := stock.Locate(filepath.Join(base, tc.from), tc.override)
			require.NoError(t, err)
			require.Equal(t, filepath.Join(base, tc.wantRoot), p.Root)
			require.Equal(t, filepath.Join(base, tc.wantStore), p.Store)
			require.Equal(t, filepath.Join(p.Store, "db"), p.DB())
		})
	}
}

func TestOpenStore(t *testing.T) {
	root := t.TempDir()
	p, err := stock.Locate(root, "")
	require.NoError(t, err)
	require.False(t, p.Exists)

	_, err = p.OpenStore(ctx, 0, false)
	require.ErrorIs(t, err, stock.ErrNoStore)
	require.ErrorContains(t, err, "looked for .harness/", "it says where it looked (the command says what to do)")
	require.NoDirExists(t, p.Store, "refusing creates nothing")

	s, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	ignore, err := os.ReadFile(filepath.Join(p.Store, ".gitignore"))
	require.NoError(t, err)
	require.Contains(t, string(ignore), "*")
	p, err = stock.Locate(root, "")
	require.NoError(t, err)
	require.True(t, p.Exists)

	// In use: reported plainly, with what to do.
	_, err = p.OpenStore(ctx, 0, false)
	require.ErrorIs(t, err, thread.ErrLocked)
	require.ErrorIs(t, err, thread.ErrLocked, "the command says to pass --wait")

	// --wait: free it a moment later, and the wait succeeds.
	go func() {
		time.Sleep(200 * time.Millisecond)
		s.Close()
	}()
	s2, err := p.OpenStore(ctx, 10*time.Second, false)
	require.NoError(t, err)
	require.NoError(t, s2.Close())
}

func TestParseModelSpec(t *testing.T) {
	cases := []struct {
		spec, want, err string
	}{
		{"scripted:s.jsonl", "scripted:/w/s.jsonl", ""},
		{"scripted:/abs/s.jsonl", "scripted:/abs/s.jsonl", ""},
		{"", "", "no model given"},
		{"scripted:", "", "name the script file"},
		{"openai:gpt-5", "openai:gpt-5", ""},
		{"openai:llama3.1:8b", "openai:llama3.1:8b", ""},
		{"anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5", ""},
		{"openai:", "", "name the model"},
		{"gemini:pro", "", "want scripted:FILE, openai:MODEL or anthropic:MODEL"},
		{"s.jsonl", "", "want scripted:FILE, openai:MODEL or anthropic:MODEL"},
	}
	for _, tc := range cases {
		got, err := stock.ParseModelSpec(tc.spec, "/w")
		if tc.err != "" {
			require.ErrorIs(t, err, stock.ErrModelSpec, tc.spec)
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
}

func TestLoadSettings(t *testing.T) {
	root := t.TempDir()
	env := func(string) string { return "" } // no user file
	// The store outside the workspace: its file is the person's.
	p := stock.Place{Root: root, Store: filepath.Join(t.TempDir(), ".harness")}
	l, err := p.LoadLayered(env)
	require.NoError(t, err, "no file is no settings")
	require.Zero(t, l.Settings)

	require.NoError(t, os.MkdirAll(p.Store, 0o755))
	require.NoError(t, os.WriteFile(p.SettingsFile(), []byte(`{"model": "scripted:s.jsonl", "approve": "writes", "allow": ["read_file"], "deny": ["run_command:rm *"]}`), 0o644))
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	require.Equal(t, stock.Settings{Model: "scripted:" + filepath.Join(root, "s.jsonl"), Approve: "writes", Allow: []string{"read_file"}, Deny: []string{"run_command:rm *"}}, l.Settings)

	// An unknown key is named, with the file; the rest is read.
	require.NoError(t, os.WriteFile(p.SettingsFile(), []byte(`{"aprove": "all", "deny": ["run_command"]}`), 0o644))
	l, err = p.LoadLayered(env)
	require.ErrorIs(t, err, stock.ErrUnknownSetting)
	require.ErrorContains(t, err, `unknown setting "aprove"`)
	require.ErrorContains(t, err, "config.json")
	require.Equal(t, []string{"run_command"}, l.Settings.Deny)

	// A value of the wrong kind is an error, and the file is left out.
	for _, bad := range []string{`{"max_turns": -1}`, `{"approve": "most"}`, `{"sandbox": "jail"}`, `{"max_steps": 0}`, `{"allow": "read_file"}`, `[]`, `{} {}`} {
		require.NoError(t, os.WriteFile(p.SettingsFile(), []byte(bad), 0o644))
		l, err = p.LoadLayered(env)
		require.Error(t, err, bad)
		require.NotErrorIs(t, err, stock.ErrUnknownSetting, bad)
		require.ErrorContains(t, err, p.SettingsFile(), bad)
		require.Zero(t, l.Settings, bad)
	}
}

// Three files, weakest first: the user's, the project's (committed), the
// store's own. A value from a stronger one wins; patterns add up; each key
// says where it came from.
func TestLayeredSettings(t *testing.T) {
	p, env, write := settingsPlace(t)
	require.Equal(t, filepath.Join(env("XDG_CONFIG_HOME"), "harness", "config.json"), stock.UserSettingsFile(env))
	require.Equal(t, "/h/.config/harness/config.json", stock.UserSettingsFile(func(k string) string { return map[string]string{"HOME": "/h"}[k] }))
	write(stock.UserSettingsFile(env), `{"model": "openai:gpt-4o-mini", "approve": "ask", "deny": ["run_command:rm *"], "max_turns": 10}`)
	write(p.ProjectSettingsFile(), `{"approve": "writes", "allow": ["run_command:go test *"], "network": true}`)
	write(p.SettingsFile(), `{"max_turns": 30, "deny": ["write_file:.github/*"]}`)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	// The project's file and the store's are inside the workspace: what
	// they widen applies once trusted.
	require.Equal(t, "ask", l.Settings.Approve)
	require.Equal(t, 10, *l.Settings.MaxTurns)
	for _, s := range l.Sources[1:] {
		require.NoError(t, p.TrustSource(env, s))
	}
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	thirty := 30
	require.Equal(t, stock.Settings{Model: "openai:gpt-4o-mini", Approve: "writes", Allow: []string{"run_command:go test *"},
		Deny: []string{"run_command:rm *", "write_file:.github/*"}, MaxTurns: &thirty, Network: true}, l.Settings)
	require.Equal(t, map[string][]stock.Scope{
		"model": {stock.ScopeUser}, "approve": {stock.ScopeProject}, "allow": {stock.ScopeProject},
		"deny": {stock.ScopeUser, stock.ScopeLocal}, "max_turns": {stock.ScopeLocal}, "network": {stock.ScopeProject},
	}, l.From)
	require.Len(t, l.Sources, 3)
	for _, s := range l.Sources {
		require.True(t, s.Exists, s.Path)
	}
}

// A NATS server named as the store: the place is remote, exists (the
// stream is made on first use), and a password in the URL is never shown.
func TestLocateARemoteStore(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"nats://localhost:4222", "tls://nats.example:4222"} {
		p, err := stock.Locate(root, name)
		require.NoError(t, err)
		require.Equal(t, name, p.Remote)
		require.True(t, p.Exists)
		require.Equal(t, name, p.Where())
		require.True(t, stock.IsRemoteStore(name))
	}
	p, err := stock.Locate(root, "nats://ana:s3cret@localhost:4222")
	require.NoError(t, err)
	require.NotContains(t, p.Where(), "s3cret")
	require.Contains(t, p.Where(), "ana:xxxxx@localhost:4222")
	require.False(t, stock.IsRemoteStore("natsdir"))
}

// MCP servers from several files add up by name; a stronger file's server
// of a name replaces a weaker one's.
func TestLayeredMCPServers(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	env := func(k string) string { return map[string]string{"XDG_CONFIG_HOME": home}[k] }
	p := stock.Place{Root: root, Store: filepath.Join(root, ".harness")}
	write := func(path, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	write(stock.UserSettingsFile(env), `{"mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}}}`)
	write(p.SettingsFile(), `{"mcpServers": {"b": {"command": "local-b"}}}`)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	require.Equal(t, "user-b", l.Settings.MCPServers["b"].Command, "the store's file is inside the workspace: not trusted yet")
	require.NoError(t, p.TrustSource(env, l.Sources[2]))
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, l.Settings.MCPServers.Names())
	require.Equal(t, "user-a", l.Settings.MCPServers["a"].Command)
	require.Equal(t, "local-b", l.Settings.MCPServers["b"].Command)
	require.Equal(t, []stock.Scope{stock.ScopeUser, stock.ScopeLocal}, l.From["mcpServers"])
}

func TestLocateFrom(t *testing.T) {
	root := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	p, err := stock.LocateFrom(root, "", getenv)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, stock.StoreDir), p.Store)
	env["HARNESS_STORE"] = "elsewhere"
	p, err = stock.LocateFrom(root, "", getenv)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "elsewhere"), p.Store)
	p, err = stock.LocateFrom(root, "given", getenv)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(root, "given"), p.Store, "the command's store wins over the environment's")
	env["HARNESS_STORE"], env["HARNESS_REPLICAS"] = "nats://127.0.0.1:4222", "3"
	p, err = stock.LocateFrom(root, "", getenv)
	require.NoError(t, err)
	require.Equal(t, 3, p.Replicas)
	for _, bad := range []string{"three", "0", "6", "-1"} {
		env["HARNESS_REPLICAS"] = bad
		_, err = stock.LocateFrom(root, "", getenv)
		require.ErrorIs(t, err, stock.ErrReplicas, bad)
	}
}

// settingsPlace is a workspace and a user configuration directory of
// their own: the place, an environment naming the directory, and a
// function that writes a settings file.
func settingsPlace(t *testing.T) (stock.Place, func(string) string, func(path, body string)) {
	root, home := t.TempDir(), t.TempDir()
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return home
		}
		return ""
	}
	write := func(path, body string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	return stock.Place{Root: root, Store: filepath.Join(root, ".harness")}, env, write
}

// Prices come from the user's own file only: a project's, or the store's,
// is ignored even once trusted (a repository would hide what it spends),
// and the table's version names the user file's digest.
func TestPricesOnlyFromTheUser(t *testing.T) {
	p, env, write := settingsPlace(t)
	write(stock.UserSettingsFile(env), `{"prices": {"openai:my-model": {"input": 1, "output": 2}}}`)
	write(p.ProjectSettingsFile(), `{"prices": {"openai:gpt-4o": {"input": 0, "output": 0}, "openai:my-model": {"input": 0, "output": 0}}}`)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	for _, s := range l.Sources[1:] {
		if s.Exists {
			require.NoError(t, p.TrustSource(env, s))
		}
	}
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	prices := l.Prices()
	require.Equal(t, model.Price{Input: 1, Output: 2}, prices.Models["openai:my-model"])
	require.Equal(t, model.DefaultPrices().Models["openai:gpt-4o"], prices.Models["openai:gpt-4o"], "the project's price is not applied")
	require.Contains(t, prices.Version, model.PricesVersion+"+user:")
	require.Contains(t, l.Sources[1].Ignored, "prices")

	write(stock.UserSettingsFile(env), `{"prices": {"openai:my-model": {"input": -1, "output": 2}}}`)
	_, err = p.LoadLayered(env)
	require.ErrorContains(t, err, "a price below 0")
}

// The user's own file inside the workspace (harness run in $HOME: a
// command could have written it) sets no price until the person trusts
// that content — which it cannot, there.
func TestPricesFromAUserFileInTheWorkspace(t *testing.T) {
	p, _, write := settingsPlace(t)
	env := func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(p.Root, ".config")
		}
		return ""
	}
	write(stock.UserSettingsFile(env), `{"prices": {"openai:gpt-4o": {"input": 0, "output": 0}}}`)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	require.Equal(t, model.DefaultPrices().Models["openai:gpt-4o"], l.Prices().Models["openai:gpt-4o"], "untrusted: not applied")
	require.Equal(t, stock.ScopeUser, l.Sources[0].Scope)
	require.Contains(t, l.Sources[0].Ignored, "prices")
	// Nor can it be trusted there: the trust file would lie in the
	// workspace too.
	require.Error(t, p.TrustSource(env, l.Sources[0]))
}

// A workspace's file may tighten the loop guard freely, but not turn it
// off or loosen it without trust.
func TestLoopGuardFromTheWorkspace(t *testing.T) {
	p, env, write := settingsPlace(t)
	write(p.ProjectSettingsFile(), `{"loop_guard": 0}`)
	l, err := p.LoadLayered(env)
	require.NoError(t, err)
	require.Nil(t, l.Settings.LoopGuard, "off is a widening, left out untrusted")
	write(p.ProjectSettingsFile(), `{"loop_guard": 2}`)
	l, err = p.LoadLayered(env)
	require.NoError(t, err)
	require.Equal(t, 2, *l.Settings.LoopGuard, "a tighter guard narrows")
	write(p.ProjectSettingsFile(), `{"loop_guard": -1}`)
	_, err = p.LoadLayered(env)
	require.ErrorContains(t, err, "loop_guard -1")
}
