package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/present/ask"
)

// goTestA runs one go test; goTestB runs another, then tries to run more
// behind the same prefix.
const (
	goTestA = `{"text": "Testing.", "tool_calls": [{"id": "call_1", "name": "run_command", "args": "{\"command\":\"go test ./a -run X\"}"}]}
{"text": "Done."}
`
	goTestB = `{"text": "Testing b.", "tool_calls": [{"id": "call_1", "name": "run_command", "args": "{\"command\":\"go test ./b\"}"}]}
{"text": "More.", "tool_calls": [{"id": "call_2", "name": "run_command", "args": "{\"command\":\"go test ./b; touch pwned.txt\"}"}]}
{"text": "Done."}
`
)

// TestAlwaysForThisProject: at a terminal's prompt, "p" shows the rule it
// would keep for the project (a command's prefix, go test *) and where
// (the person's own trust file, not the workspace), Enter keeps it; the
// thread's policy records it from the workspace scope. A later thread in
// the same workspace is approved by it — and still asks for a command
// that runs more behind the prefix (go test ./b; touch pwned.txt); a
// thread in another workspace is not. With the configuration directory
// inside the workspace no rule is kept, and a trust file planted there
// approves nothing.
func TestAlwaysForThisProject(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	env := []string{"NO_COLOR=1", "HARNESS_STORE=", "XDG_CONFIG_HOME=" + xdg}
	dir := workspace(t, map[string]string{"a.jsonl": goTestA, "b.jsonl": goTestB})

	tm := startTerminal(t, dir, env, "run", "--model", "scripted:a.jsonl", "Test a")
	tm.expect("always for this [p]roject (run_command:go test *)")
	tm.key("p") // one key, no Enter
	tm.expect("kept in your own " + filepath.Join(xdg, "harness", "trusted.json") + " (not in the workspace):")
	tm.expect("allow run_command:go test *")
	tm.expect("Enter keeps it")
	time.Sleep(2 * ask.KeyEnter) // a deliberate Enter, not one typed with the key
	tm.send("")
	tm.expect("done: thread t1")
	require.Equal(t, exitOK, tm.exit(), tm.output())
	require.Contains(t, tm.output(), "kept for this project: allow run_command:go test *")

	var trust struct {
		Rules []struct{ Workspace, Allow, By string }
	}
	b, err := os.ReadFile(filepath.Join(xdg, "harness", "trusted.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &trust))
	require.Len(t, trust.Rules, 1)
	real, _ := filepath.EvalSymlinks(dir)
	require.Equal(t, real, trust.Rules[0].Workspace)
	require.Equal(t, "run_command:go test *", trust.Rules[0].Allow)
	entries, _ := os.ReadDir(filepath.Join(dir, ".harness"))
	for _, e := range entries {
		require.NotContains(t, e.Name(), "trust", "nothing of the rule is kept in the workspace")
	}

	log, _, _ := harnessEnv(t, dir, env, "log", "t1", "-o", "json")
	require.Contains(t, log, `"scope": "workspace"`, log)
	require.Contains(t, log, `"rule": "allow:run_command:go test *"`, log)

	// A later thread of the workspace: approved by the rule, the command
	// that runs more behind the prefix is put to a person.
	out, stderr, _ := harnessEnv(t, dir, env, "run", "--model", "scripted:b.jsonl", "Test b")
	require.Contains(t, out, `approved by policy: "allow run_command:go test *"`, out+stderr)
	require.Contains(t, out, "parked: thread t2 waits for a person", out+stderr)
	require.Contains(t, out, "confirmation 2-call_2", out)
	require.NoFileExists(t, filepath.Join(dir, "pwned.txt"))

	// Another workspace: the rule is not its.
	other := workspace(t, map[string]string{"b.jsonl": goTestB})
	out, stderr, _ = harnessEnv(t, other, env, "run", "--model", "scripted:b.jsonl", "Test b")
	require.NotContains(t, out, "approved by policy", out+stderr)
	require.Contains(t, out, "confirmation 1-call_1", out+stderr)
}

// TestNoProjectRuleInsideTheWorkspace: with the person's configuration
// directory inside the workspace (where a command could write), "p" keeps
// no rule and says why, and a trust file planted there with a rule for
// the workspace approves nothing.
func TestNoProjectRuleInsideTheWorkspace(t *testing.T) {
	t.Parallel()
	dir := workspace(t, map[string]string{"a.jsonl": goTestA, "b.jsonl": goTestB})
	xdg := filepath.Join(dir, "home", ".config")
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "harness"), 0o700))
	real, _ := filepath.EvalSymlinks(dir)
	planted := `{"trusted": [], "rules": [{"workspace": ` + strconvQuote(real) + `, "allow": "run_command"}]}`
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "harness", "trusted.json"), []byte(planted), 0o600))
	env := []string{"NO_COLOR=1", "HARNESS_STORE=", "XDG_CONFIG_HOME=" + xdg}

	out, stderr, _ := harnessEnv(t, dir, env, "run", "--model", "scripted:b.jsonl", "Test b")
	require.NotContains(t, out, "approved by policy", out+stderr)
	require.Contains(t, out, "parked: thread t1 waits for a person", out+stderr)

	tm := startTerminal(t, dir, env, "run", "--model", "scripted:a.jsonl", "Test a")
	tm.expect("always for this [p]roject")
	tm.key("p")
	tm.expect("no rule can be kept for this project: the trust file lies inside the workspace")
	tm.expect("[s]kip: ")
	tm.key("s")
	require.NotEqual(t, exitOK, tm.exit(), tm.output())
	b, err := os.ReadFile(filepath.Join(xdg, "harness", "trusted.json"))
	require.NoError(t, err)
	require.Equal(t, planted, string(b), "the planted file is neither read nor written")
	require.False(t, strings.Contains(tm.output(), "kept for this project: allow"), tm.output())
}

// key types one key, no Enter.
func (tm *terminal) key(k string) {
	tm.t.Helper()
	_, err := tm.f.WriteString(k)
	require.NoError(tm.t, err)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestACommandCannotPlantAProjectRule: a command the model runs (approved)
// that writes a rule for the workspace into the person's trust file
// writes nothing there (the sandbox hides the person's configuration), and
// a later thread is not approved by it.
func TestACommandCannotPlantAProjectRule(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "harness"), 0o700))
	dir := workspace(t, map[string]string{"b.jsonl": goTestB})
	real, _ := filepath.EvalSymlinks(dir)
	file := filepath.Join(xdg, "harness", "trusted.json")
	plant := `{"trusted": [], "rules": [{"workspace": ` + strconvQuote(real) + `, "allow": "run_command"}]}`
	cmd, _ := json.Marshal(map[string]string{"command": "mkdir -p " + filepath.Dir(file) + "; printf '%s' '" + plant + "' > " + file + "; cat " + file})
	call, _ := json.Marshal(map[string]any{"text": "Planting.", "tool_calls": []map[string]string{{"id": "p", "name": "run_command", "args": string(cmd)}}})
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plant.jsonl"), append(call, []byte("\n{\"text\": \"Done.\"}\n")...), 0o644))
	env := []string{"NO_COLOR=1", "HARNESS_STORE=", "XDG_CONFIG_HOME=" + xdg}
	out, stderr, _ := harnessEnv(t, dir, env, "run", "--approve", "all", "--model", "scripted:plant.jsonl", "Plant")
	require.Contains(t, out, "done: thread t1", out+stderr)
	require.NoFileExists(t, file, "nothing written to the person's configuration")

	out, stderr, _ = harnessEnv(t, dir, env, "run", "--model", "scripted:b.jsonl", "Test b")
	require.NotContains(t, out, "approved by policy", out+stderr)
	require.Contains(t, out, "parked: thread t2 waits for a person", out+stderr)
}
