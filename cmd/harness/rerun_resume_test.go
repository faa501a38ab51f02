//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/harnesstest"
)

// matchingServer is an OpenAI-compatible server whose model makes the
// suite script's calls; while hold is set it keeps turn 3 waiting.
type matchingServer struct {
	hold  atomic.Bool
	held  atomic.Int64 // turn 3 requests held
	total atomic.Int64
}

func (s *matchingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, turn, err := chatRequest(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.total.Add(1)
	if turn == 3 && s.hold.Load() {
		s.held.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	calls := map[int]string{
		1: `{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}}`,
		2: `{"id":"b","type":"function","function":{"name":"write_file","arguments":"{\"content\":\"ttl_seconds = 300\\n\",\"path\":\"cache.toml\"}"}}`,
		3: `{"id":"c","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"notes.txt\",\"content\":\"ttl is 300\\n\"}"}}`,
	}
	writeChatTurn(w, calls[turn])
}

// TestRerunKilledThenResumed: a rerun killed (SIGKILL) while its model
// works on turn 3 goes on with a plain harness resume — served from the
// original's log through its recorded link, on its recorded model —
// and ends matched, having run nothing.
func TestRerunKilledThenResumed(t *testing.T) {
	dir := workspace(t, map[string]string{"notes.txt": "line one\n"})
	recordThreads(t, dir, 1)
	notes, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	require.NoError(t, err)
	cache, err := os.ReadFile(filepath.Join(dir, "cache.toml"))
	require.NoError(t, err)

	srv := &matchingServer{}
	srv.hold.Store(true)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+t.TempDir(), "OPENAI_BASE_URL="+hs.URL+"/v1", "OPENAI_API_KEY=k")

	cmd := exec.Command(harnessBin(t), "rerun", "t01", "--model", "openai:gpt-4.1-mini")
	cmd.Dir, cmd.Env = dir, env
	var out harnesstest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return srv.held.Load() > 0 }, 60*time.Second, 5*time.Millisecond, "turn 3 never asked:\n%s", &out)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait())

	turns := recordedTurns(t, dir)
	require.Len(t, turns, 1)
	var id string
	for k, n := range turns {
		id = k
		require.Equal(t, 2, n, "two turns recorded before the kill")
	}

	srv.hold.Store(false)
	asked := srv.total.Load()
	resume := exec.Command(harnessBin(t), "resume", id)
	resume.Dir, resume.Env = dir, env
	b, err := resume.CombinedOutput()
	require.NoError(t, err, "%s", b)
	require.Contains(t, string(b), id+" is a rerun of t01: it goes on as harness rerun t01 --as "+id+" does")
	require.Contains(t, string(b), "rerun of t01 as "+id+" on openai:gpt-4.1-mini: matched")
	require.Contains(t, string(b), "served: 3 calls from t01's log, nothing run")
	require.Equal(t, int64(2), srv.total.Load()-asked, "turns 3 and 4 asked, not 1 and 2 again")

	verify := exec.Command(harnessBin(t), "replay", id, "--verify")
	verify.Dir, verify.Env = dir, env
	b, err = verify.CombinedOutput()
	require.NoError(t, err, "%s", b)
	got, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, notes, got)
	got, err = os.ReadFile(filepath.Join(dir, "cache.toml"))
	require.NoError(t, err)
	require.Equal(t, cache, got)
}

// liveServer makes the suite script's first two calls, then notes
// something else (the divergence), then, while hold is set, keeps turn 4
// waiting.
type liveServer struct{ matchingServer }

func (s *liveServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, turn, err := chatRequest(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if turn == 4 && s.hold.Load() {
		s.held.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(time.Minute):
		}
		return
	}
	calls := map[int]string{
		1: `{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}}`,
		2: `{"id":"b","type":"function","function":{"name":"write_file","arguments":"{\"content\":\"ttl_seconds = 300\\n\",\"path\":\"cache.toml\"}"}}`,
		3: `{"id":"c","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"notes.txt\",\"content\":\"ttl noted\\n\"}"}}`,
	}
	writeChatTurn(w, calls[turn])
}

// TestLiveRerunKilledGoesOnInItsCopy: a live rerun killed (SIGKILL) after
// it ran its diverged turn in the scratch copy goes on in that copy when
// run again, and the workspace is never touched.
func TestLiveRerunKilledGoesOnInItsCopy(t *testing.T) {
	dir := workspace(t, map[string]string{"notes.txt": "line one\n"})
	recordThreads(t, dir, 1)
	notes, err := os.ReadFile(filepath.Join(dir, "notes.txt"))
	require.NoError(t, err)

	srv := &liveServer{}
	srv.hold.Store(true)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	tmp := t.TempDir()
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+t.TempDir(), "OPENAI_BASE_URL="+hs.URL+"/v1", "OPENAI_API_KEY=k", "TMPDIR="+tmp)
	args := []string{"rerun", "t01", "--model", "openai:gpt-4.1-mini", "--live", "--approve", "all"}

	cmd := exec.Command(harnessBin(t), args...)
	cmd.Dir, cmd.Env = dir, env
	var out harnesstest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return srv.held.Load() > 0 }, 60*time.Second, 5*time.Millisecond, "turn 4 never asked:\n%s", &out)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait())
	copies, err := filepath.Glob(filepath.Join(tmp, "harness-rerun-*"))
	require.NoError(t, err)
	require.Len(t, copies, 1, "%s", &out)
	scratch := copies[0]
	got, err := os.ReadFile(filepath.Join(scratch, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, "ttl noted\n", string(got), "turn 3 ran in the copy before the kill")

	srv.hold.Store(false)
	again := exec.Command(harnessBin(t), args...)
	again.Dir, again.Env = dir, env
	b, err := again.CombinedOutput()
	require.NoError(t, err, "%s", b)
	require.Contains(t, string(b), "goes on in its scratch copy "+scratch)
	require.Contains(t, string(b), "live: the rerun is done")
	copies, err = filepath.Glob(filepath.Join(tmp, "harness-rerun-*"))
	require.NoError(t, err)
	require.Len(t, copies, 1, "no second copy was made")
	got, err = os.ReadFile(filepath.Join(dir, "notes.txt"))
	require.NoError(t, err)
	require.Equal(t, notes, got, "the workspace is unchanged")

	// The copy gone: refused, clearly.
	require.NoError(t, os.RemoveAll(scratch))
	gone := exec.Command(harnessBin(t), args...)
	gone.Dir, gone.Env = dir, env
	b, err = gone.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(b), scratch+" is gone")
	require.Contains(t, string(b), "--live --as NEWID begins another")
}
