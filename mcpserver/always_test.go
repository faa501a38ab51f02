package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/mcpserver"
	"github.com/seed-7cc7a084/harness/stock"
)

// stockWorkspace is a workspace of the stock harness, whose always-rules
// a stock session keeps (Opened.AnswerPending), or none (rules false).
type stockWorkspace struct {
	e     *harnesstest.Stock
	rules bool
}

func (w stockWorkspace) Open(context.Context, mcpserver.OpenRequest) (*mcpserver.Opened, error) {
	// The runtime as a front end makes it: its config names the
	// workspace (the fixture's runtime was made before the stock named it).
	rt := *w.e.RT
	rt.Config.Workspace = w.e.Stock.Config.Workspace
	o := &mcpserver.Opened{Runtime: &rt, Actor: w.e.Stock.Actor, Close: func() error { return nil }}
	if w.rules {
		o.AnswerPending = stock.SessionOf(w.e.Store, w.e.Stock).AnswerPending
	}
	return o, nil
}

// TestAlwaysFromTheMCPServer: the answer tool takes "always" (a rule
// for the thread) and "project" (kept for the project in the person's
// own configuration, never in the workspace), as the page and the API
// do, and view offers the rule. Only with an approval a person gives
// (a client vouched for as a person) and that binds the call waiting:
// a refused answer keeps no rule and amends no policy; a workspace that
// keeps no rules refuses one.
func TestAlwaysFromTheMCPServer(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	ruleFile := filepath.Join(xdg, "harness", "trusted.json")
	e := harnesstest.NewStock(t, harnesstest.StockScript)
	ws := stockWorkspace{e: e, rules: true}
	person := client(t, ws, mcpserver.ServerOptions{ClientApproves: true, Person: func(*sdk.CallToolRequest) string { return "bo" }})
	agent := client(t, ws, mcpserver.ServerOptions{})

	why, v := person("start", map[string]any{"task": "Set the TTL and note it", "thread": "t1"})
	require.Empty(t, why)
	require.Equal(t, harness.StatusParked, v.Status)
	w := v.Waits[0]
	require.Equal(t, "write_file", w.Tool)
	ref := drive.Ref(w)
	require.Contains(t, v.Answers[ref], `"always": "write_file:cache.toml"`, "the rule offered")
	before := len(e.Watched)
	other := "sha256:" + strings.Repeat("0", 64)
	answer := func(extra map[string]any) map[string]any {
		a := map[string]any{"thread": "t1", "request_id": ref, "approve": true, "digest": w.Digest, "resume": false}
		for k, x := range extra {
			a[k] = x
		}
		return a
	}
	for _, c := range []struct {
		call func(string, map[string]any) (string, mcpserver.ThreadView)
		args map[string]any
		want string
	}{
		{agent, answer(map[string]any{"always": "write_file:*", "project": true}), "approvals stay with a person"},
		{person, answer(map[string]any{"always": "write_file:*", "project": true, "digest": other}), "is not the call's"},
		{person, answer(map[string]any{"always": "write_file:*", "project": true, "approve": false}), "comes with an approval"},
		{person, answer(map[string]any{"project": true}), "names its rule"},
		{person, answer(map[string]any{"always": ":x", "project": true}), "always:"},
		{client(t, stockWorkspace{e: e}, mcpserver.ServerOptions{ClientApproves: true}), answer(map[string]any{"always": "write_file:*"}), "keeps no always-rules"},
	} {
		why, _ := c.call("answer", c.args)
		require.Contains(t, why, c.want, "%v", c.args)
		require.NoFileExists(t, ruleFile, "a refused answer keeps no rule for the project")
		require.Len(t, e.Watched, before, "nor appends anything (%v)", c.args)
	}

	why, v = person("answer", answer(map[string]any{"always": "write_file:*.toml", "project": true}))
	require.Empty(t, why)
	require.Equal(t, drive.Yes, v.Posted)
	var trust stock.Trust
	raw, err := os.ReadFile(ruleFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &trust))
	root, _ := filepath.EvalSymlinks(e.Root)
	// The rule is bound to the workspace directory itself too.
	require.Len(t, trust.Rules, 1)
	require.NotEmpty(t, trust.Rules[0].Dir, "the rule names the directory's identity")
	trust.Rules[0].Dir = ""
	require.Equal(t, []stock.ProjectRule{{Workspace: root, Allow: "write_file:*.toml", By: "bo (via mcp:test)"}}, trust.Rules)
	var kinds []facts.Kind
	for _, f := range e.Watched[before:] {
		kinds = append(kinds, f.Kind)
	}
	require.Equal(t, []facts.Kind{facts.KindPolicySet, facts.KindConfirmationAnswered}, kinds, "the rule, then the approval")
	p, err := facts.Decode[facts.PolicySet](e.Watched[before])
	require.NoError(t, err)
	require.Contains(t, p.Allow, "write_file:*.toml")
	require.True(t, slices.Contains(p.Sources, facts.RuleSource{Rule: "allow:write_file:*.toml", Scope: string(stock.ScopeWorkspace), Path: ruleFile}))
	a, err := facts.Decode[facts.ConfirmationAnswered](e.Watched[before+1])
	require.NoError(t, err)
	require.True(t, a.Approved)
	require.Equal(t, "always, for this project: write_file:*.toml", a.Reason)
	require.Equal(t, "bo (via mcp:test)", a.By)
}
