package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const planScript = `{"text": "Plan: set ttl_seconds = 300 in cache.toml."}
{"text": "Done as planned."}
`

// TestPlanPromptNoticesAPlanActedOnElsewhere: a terminal asking whether
// to act on a plan watches the log; acted on from another process
// (harness plan t1 act), the prompt stops asking, says who acted, and
// ends as the thread did, the plan acted on once.
func TestPlanPromptNoticesAPlanActedOnElsewhere(t *testing.T) {
	t.Parallel()
	dir := workspace(t, map[string]string{"plan.jsonl": planScript})
	env := []string{"NO_COLOR=1", "HARNESS_STORE=", "XDG_CONFIG_HOME=" + t.TempDir()}
	tm := startTerminal(t, dir, env, "run", "--plan", "--model", "scripted:plan.jsonl", "Plan it")
	tm.expect("Act on the plan plan-1? ")
	out, stderr, code := harnessEnv(t, dir, env, "plan", "t1", "act")
	require.Zero(t, code, out+stderr)
	tm.expect("answered elsewhere: the plan of turn 1 acted on by ")
	tm.send("y") // late: the prompt is gone
	require.Equal(t, exitOK, tm.exit(), tm.output())
	require.Contains(t, tm.output(), "not asking any more")
	require.Contains(t, tm.output(), "done: thread t1")
	log, _, _ := harnessEnv(t, dir, env, "log", "t1")
	require.Equal(t, 1, strings.Count(log, "to act on the plan of turn 1"), log)
}
