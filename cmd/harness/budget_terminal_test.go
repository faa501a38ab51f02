package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// budgetTerminalScript: the parent delegates; the child reads twice, one
// read a turn. Every turn reads 10000 tokens.
const budgetTerminalScript = `{"text": "Delegating.", "tool_calls": [{"id": "d1", "name": "delegate", "args": "{\"task\":\"Read a twice\",\"tools\":[\"read_file\"]}"}], "usage": {"input_tokens": 10000}}
{"text": "Both read.", "usage": {"input_tokens": 10000}}
{"thread": "1-d1", "text": "a1", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}], "usage": {"input_tokens": 10000}}
{"thread": "1-d1", "text": "a2", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}], "usage": {"input_tokens": 10000}}
{"thread": "1-d1", "text": "a read twice.", "usage": {"input_tokens": 10000}}
`

// On a terminal, a tree that parks on its budget asks the person for a
// raise: what is not an amount is said and asked again; Enter leaves it
// parked, with the command that raises it; an amount raises the root's
// budget (recorded with who and how much) and the tree goes on to done.
func TestTerminalAsksForARaise(t *testing.T) {
	const ask = "Raise the tree's budget (t1.1-d1/budget)? By how much, such as $5, 200000 tokens or 5 turns; Enter skips: "
	dir := workspace(t, map[string]string{"script.jsonl": budgetTerminalScript, "a": "a\n"})
	env := []string{"NO_COLOR=1", "HARNESS_STORE="}
	tm := startTerminal(t, dir, env, "run", "--max-tokens", "25000", "--model", "scripted:script.jsonl", "Read a twice, through a helper")
	tm.expect(ask)
	require.Contains(t, tm.output(), "cannot cover the next turn (20000 spent, about 10000 more)")
	tm.send("")
	require.Equal(t, exitParked, tm.exit(), tm.output())
	require.Contains(t, tm.output(), "harness budget t1 raise --tokens N --resume", "the hint, once skipped: the bound reached")
	require.NotContains(t, tm.output(), "--cost USD", "the budget has no bound in dollars")

	// A raise in dollars of a budget in tokens alone would change nothing:
	// refused, saying what the budget has and how to raise it.
	_, stderr, code := harnessEnv(t, dir, env, "budget", "t1", "raise", "--cost", "5")
	require.Equal(t, exitUsage, code, stderr)
	require.Contains(t, stderr, "the budget of t1 has no bound in dollars: a raise in dollars would change nothing; it is bounded by 25000 tokens")
	require.Contains(t, stderr, "harness budget t1 raise --tokens N")
	stdout, _, _ := harnessEnv(t, dir, env, "log", "t1")
	require.NotContains(t, stdout, "budget.raised", "nothing recorded")

	tm = startTerminal(t, dir, env, "resume", "t1")
	tm.expect(ask)
	tm.send("lots \x1b[31m")
	tm.expect(`"lots": say $ for dollars, tokens for tokens or turns for model turns`)
	require.NotContains(t, tm.output(), "\x1b[31m", "what was typed is escaped")
	expectN(tm, ask, 2) // asked again: what is typed before answers nothing
	tm.send("$5")
	tm.expect("the tree's budget has no bound in dollars: a raise in dollars would change nothing; raise it in tokens")
	expectN(tm, ask, 3)
	tm.send("100k tokens")
	require.Equal(t, exitOK, tm.exit(), tm.output())
	out := tm.output()
	require.Contains(t, out, "budget.raised")
	require.Contains(t, out, "tree budget raised by 100000 tokens by ")
	require.Contains(t, out, "done: thread t1")
	require.Equal(t, 3, strings.Count(out, "Raise the tree's budget"), "asked once, then again after each reply that raised nothing")
}

// A root that ran its --max-turns asks the same way, and a number of
// turns raises its bound: recorded with who and how much, the thread goes
// on to done.
func TestTerminalAsksForMoreTurns(t *testing.T) {
	const ask = "Raise the tree's budget (budget)? By how much, such as $5, 200000 tokens or 5 turns; Enter skips: "
	script := `{"text": "a", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"a\"}"}]}
{"text": "b", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"b\"}"}]}
{"text": "Both read."}
`
	dir := workspace(t, map[string]string{"script.jsonl": script, "a": "a\n", "b": "b\n"})
	tm := startTerminal(t, dir, []string{"NO_COLOR=1", "HARNESS_STORE="}, "run", "--max-turns", "2", "--model", "scripted:script.jsonl", "Read a and b")
	tm.expect(ask)
	require.Contains(t, tm.output(), "the thread ran its 2 model turns")
	tm.send("0 turns")
	tm.expect("a raise adds money, tokens or model turns")
	expectN(tm, ask, 2) // asked again: what is typed before answers nothing
	tm.send("1 turn")
	require.Equal(t, exitOK, tm.exit(), tm.output())
	out := tm.output()
	require.Contains(t, out, "tree budget raised by 1 model turn by ")
	require.Contains(t, out, "done: thread t1")
}
