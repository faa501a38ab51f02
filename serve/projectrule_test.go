package serve_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/stock"
)

// TestAlwaysForThisProjectOnThePage: the page's confirmation card shows
// the rule "always, for this project" would keep and the person's own
// file it is kept in, before anything is kept; the form (its rule edited)
// approves the call, keeps the edited rule for the workspace in that file,
// and the thread's policy records it from the workspace scope; a
// workspace's later settings carry it. The API refuses a project rule
// without an approval or without a rule, and one that does not parse.
func TestAlwaysForThisProjectOnThePage(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	ruleFile := filepath.Join(xdg, "harness", "trusted.json")
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	d := f.detail("t1")

	for body, want := range map[string]string{
		`{"kind": "confirmation", "request_id": "1-call_1", "approved": false, "digest": "` + d.Waits[0].Digest + `", "always": "write_file:*", "project": true}`: "comes with an approval",
		`{"kind": "confirmation", "request_id": "1-call_1", "approved": true, "digest": "` + d.Waits[0].Digest + `", "project": true}`:                            "names its rule",
		`{"kind": "confirmation", "request_id": "1-call_1", "approved": true, "digest": "` + d.Waits[0].Digest + `", "always": ":x", "project": true}`:            "name a tool",
	} {
		resp, b := f.do("POST", "/api/threads/t1/answer", body)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(b))
		require.Contains(t, string(b), want)
	}
	require.NoFileExists(t, ruleFile, "nothing kept by a refused answer")

	c, get := f.browser(t)
	get("/?token=" + token)
	page := html.UnescapeString(get("/t/t1"))
	require.Contains(t, page, "Always, for this project")
	require.Contains(t, page, `value="write_file:cache.toml"`, "the rule offered")
	require.Contains(t, page, "in your own <code>"+ruleFile+"</code>, never in the workspace", "where it is kept, before it is kept")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(page)
	require.NotNil(t, m)
	form := url.Values{"csrf": {m[1]}, "kind": {"confirmation"}, "request": {"1-call_1"}, "digest": {d.Waits[0].Digest},
		"answer": {"approve"}, "project": {"1"}, "always": {"write_file:*.toml"}} // edited
	resp, err := c.PostForm(f.http.URL+"/t/t1/answer", form)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(b))

	var trust stock.Trust
	raw, err := os.ReadFile(ruleFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &trust))
	root, _ := filepath.EvalSymlinks(f.root)
	// The rule is bound to the workspace directory itself too.
	require.Len(t, trust.Rules, 1)
	require.NotEmpty(t, trust.Rules[0].Dir, "the rule names the directory's identity")
	trust.Rules[0].Dir = ""
	require.Equal(t, []stock.ProjectRule{{Workspace: root, Allow: "write_file:*.toml", By: "ana"}}, trust.Rules)

	p, err := facts.Decode[facts.PolicySet](f.last("t1", facts.KindPolicySet))
	require.NoError(t, err)
	require.Contains(t, p.Allow, "write_file:*.toml")
	require.Contains(t, p.Sources, facts.RuleSource{Rule: "allow:write_file:*.toml", Scope: string(stock.ScopeWorkspace), Path: ruleFile})
	a, err := facts.Decode[facts.ConfirmationAnswered](f.last("t1", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.True(t, a.Approved)
	require.Equal(t, "always, for this project: write_file:*.toml", a.Reason)

	// A later thread of the workspace starts with it.
	l, err := f.place.LoadLayered(os.Getenv)
	require.NoError(t, err)
	later, err := l.Policy("ana")
	require.NoError(t, err)
	require.Contains(t, later.Sources, facts.RuleSource{Rule: "allow:write_file:*.toml", Scope: string(stock.ScopeWorkspace), Path: ruleFile})
}
