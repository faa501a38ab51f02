package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/serve"
)

// TestGoPolicyDrivesServe: a policy written in Go, given to the server,
// answers the confirmation when the server resumes the thread; the answer
// is recorded by the policy's name, with its rule as the reason.
func TestGoPolicyDrivesServe(t *testing.T) {
	var mu sync.Mutex // guards asked
	var asked []string
	policy := drive.PolicyFunc("policy:cache-only", func(tool string, c action.Capability, args string) drive.Decision {
		mu.Lock()
		asked = append(asked, tool)
		mu.Unlock()
		if p, ok := drive.Subject(args); ok && tool == "write_file" && p == "cache.toml" {
			return drive.Decision{Approved: true, Rule: "cache.toml may change"}
		}
		return drive.Decision{Ask: true}
	})
	f := newFixture(t, harnesstest.ToolScript, func(o *serve.Options) { o.Policy = policy })
	out := f.start("t1")
	require.Equal(t, harness.StatusParked, out.Status)

	resp, b := f.do("POST", "/api/threads/t1/resume", "")
	require.Equal(t, http.StatusAccepted, resp.StatusCode, string(b))
	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })

	ans, err := facts.Decode[facts.ConfirmationAnswered](f.last("t1", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.True(t, ans.Approved)
	require.Equal(t, "policy:cache-only", ans.By)
	require.Equal(t, "cache.toml may change", ans.Reason)
	mu.Lock()
	require.Equal(t, []string{"write_file"}, asked)
	mu.Unlock()
	got, err := os.ReadFile(filepath.Join(f.root, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", string(got))
}

// TestGoPolicyDenies: a Go policy's denial is told to the model, and the
// thread goes on; the server never asks a person.
func TestGoPolicyDenies(t *testing.T) {
	no := drive.PolicyFunc("policy:read-only", func(string, action.Capability, string) drive.Decision {
		return drive.Decision{Rule: "nothing may be written"}
	})
	f := newFixture(t, harnesstest.ToolScript, func(o *serve.Options) { o.Policy = no })
	f.start("t1")
	resp, b := f.do("POST", "/api/threads/t1/resume", "")
	require.Equal(t, http.StatusAccepted, resp.StatusCode, string(b))
	f.waitFor("t1", "done", func(d serve.ThreadDetail) bool { return d.Status == harness.StatusDone && !d.Resuming })
	ans, err := facts.Decode[facts.ConfirmationAnswered](f.last("t1", facts.KindConfirmationAnswered))
	require.NoError(t, err)
	require.False(t, ans.Approved)
	require.Equal(t, "policy:read-only", ans.By)
	got, err := os.ReadFile(filepath.Join(f.root, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 60\n", string(got))
}
