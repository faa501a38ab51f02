package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const delegateTerminalScript = `{"text": "A helper will do it.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL to 300\"}"}]}
{"text": "Done."}
{"thread": "1-d1", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"thread": "1-d1", "text": "Set."}
`

// On a terminal, a child's confirmation is asked at the parent's prompt,
// named by the child, and the answer reaches the child.
func TestPromptForAChild(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": delegateTerminalScript})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "Set the cache TTL to 300")
	tm.expect("Approve t1.1-d1/1-w (write_file)? [y]es, [a]lways for this thread (write_file:cache.toml), always for this [p]roject (write_file:cache.toml), [n]o and tell the model, [d]eny and stop, [s]kip: ")
	tm.send("y")
	require.Equal(t, exitOK, tm.exit(), tm.output())
	require.Contains(t, tm.output(), "t1.1-d1    7  confirmation.answered  1-w approved by ")
	require.Contains(t, tm.output(), "done: thread t1")
	got, err := os.ReadFile(filepath.Join(dir, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", string(got))
}

const delegateTwiceScript = `{"text": "A helper will do it.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Set the TTL to 300, then 600\"}"}]}
{"text": "Done."}
{"thread": "1-d1", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"thread": "1-d1", "tool_calls": [{"id": "v", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 600\\n\"}"}]}
{"thread": "1-d1", "text": "Set."}
`

// "Always" at a child's request adds the pattern to the tree's policy (the
// parent's): the child's next call like it is approved without asking.
func TestAlwaysForAChild(t *testing.T) {
	dir := workspace(t, map[string]string{"script.jsonl": delegateTwiceScript})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--model", "scripted:script.jsonl", "Set the cache TTL")
	tm.expect("Approve t1.1-d1/1-w (write_file)? [y]es, [a]lways for this thread (write_file:cache.toml), always for this [p]roject (write_file:cache.toml), [n]o and tell the model, [d]eny and stop, [s]kip: ")
	tm.send("a")
	require.Equal(t, exitOK, tm.exit(), tm.output())
	out := tm.output()
	require.Contains(t, out, "policy.set")
	require.Contains(t, out, `1-w approved by `)
	require.Regexp(t, `2-v approved by policy`, out)
	require.Equal(t, 1, strings.Count(out, "Approve "), "asked once")
	require.Contains(t, out, "done: thread t1")
	got, err := os.ReadFile(filepath.Join(dir, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 600\n", string(got))
}
