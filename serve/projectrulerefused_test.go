package serve_test

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

// An approval that is refused keeps no rule: one for another call than
// the one waiting (a stale page, a request id that now names another
// call), or for a call that is not waiting, keeps nothing in the
// person's file and amends no thread's policy — the rule came with the
// approval, and the approval was not given.
func TestRefusedApprovalKeepsNoProjectRule(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	ruleFile := filepath.Join(xdg, "harness", "trusted.json")
	f := newFixture(t, harnesstest.ToolScript)
	f.start("t1")
	d := f.detail("t1")
	before := f.kinds("t1")

	other := "sha256:" + strings.Repeat("0", 64)
	for body, want := range map[string]string{
		`{"kind": "confirmation", "request_id": "1-call_1", "approved": true, "digest": "` + other + `", "always": "run_command:*", "project": true}`:             "digest_differs",
		`{"kind": "confirmation", "request_id": "1-call_9", "approved": true, "digest": "` + d.Waits[0].Digest + `", "always": "run_command:*", "project": true}`: "no_such_request",
		`{"kind": "confirmation", "request_id": "1-call_1", "approved": true, "digest": "` + other + `", "always": "run_command:*"}`:                              "digest_differs",
	} {
		resp, b := f.do("POST", "/api/threads/t1/answer", body+"\n")
		require.Equal(t, http.StatusConflict, resp.StatusCode, string(b))
		require.Contains(t, string(b), want)
		require.NoFileExists(t, ruleFile, "a refused approval keeps no rule for the project")
		require.Equal(t, before, f.kinds("t1"), "nor amends the thread's policy")
		require.False(t, slices.Contains(f.kinds("t1"), facts.KindPolicySet))
	}
}
