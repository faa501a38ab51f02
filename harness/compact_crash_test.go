package harness_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// compactChildEnv, when set, makes TestCompactionCrashChild run the
// session of its compactSpec (JSON).
const compactChildEnv = "HARNESS_COMPACT_CHILD"

type compactSpec struct {
	Dir, URL string
	Window   int
}

// compactWindow is the crash session's context window: small enough that
// its first compaction comes a few turns in.
const compactWindow = 3000

// A process killed (SIGKILL) while its compaction turn waits for the
// model leaves nothing of the compaction in the log; the Resume after
// runs the compaction turn again — the same request — and only it: no
// model turn before it runs again, and the session ends as one never
// killed.
func TestCompactionCrash(t *testing.T) {
	summaries := make(chan []byte, 1)
	var first sync.Once
	p := &provider{turns: 12}
	p.onSummary = func(r *http.Request, body []byte) {
		first.Do(func() {
			summaries <- body
			<-r.Context().Done() // the first waits until its process is gone
		})
	}
	srv := httptest.NewServer(p)
	defer srv.Close()
	spec := compactSpec{Dir: t.TempDir(), URL: srv.URL, Window: compactWindow}
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactionCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), compactChildEnv+"="+string(raw))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	var killed []byte
	select {
	case killed = <-summaries:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child never asked for a compaction:\n%s", out.String())
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err = cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	ws, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child was killed: %v\n%s", err, out.String())
	beforeKill := p.requests()

	s, err := thread.OpenPebble(spec.Dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	rt, actor := compactRuntime(t, s, spec.URL, spec.Window)
	require.NoError(t, audit.VerifyLog(ctx, s, actor, "c"))
	v, err := rt.View(ctx, actor, "c")
	require.NoError(t, err)
	require.Equal(t, harness.StatusResumable, v.Status)
	require.Regexp(t, `^compact/\d+$`, v.Next, "the compaction turn is what runs next")
	for f, err := range s.Read(ctx, "c", 1) {
		require.NoError(t, err)
		require.NotEqual(t, facts.KindContextCompacted, f.Kind, "nothing of the compaction is in the log")
	}

	res, err := rt.Resume(ctx, actor, "c")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, res.Status, res.Reason)
	require.NoError(t, audit.VerifyLog(ctx, s, actor, "c"))

	after := p.requests()[len(beforeKill):]
	require.NotEmpty(t, after)
	require.True(t, after[0].summary, "the first request after the kill is the compaction turn")
	require.Equal(t, string(killed), string(after[0].body), "the same compaction request, sent again")
	steps := map[int]int{}
	for _, r := range p.requests() {
		if !r.summary {
			steps[r.step]++
		}
	}
	for step, n := range steps {
		require.Equal(t, 1, n, "model turn %d was asked %d times", step, n)
	}
	var turns, compactions int
	for f, err := range s.Read(ctx, "c", 1) {
		require.NoError(t, err)
		switch f.Kind {
		case facts.KindModelTurn:
			turns++
		case facts.KindContextCompacted:
			compactions++
		}
	}
	require.Equal(t, p.turns, turns)
	require.Positive(t, compactions)
	require.Equal(t, len(steps), turns, "each model turn asked once")
}

// TestCompactionCrashChild is the child of TestCompactionCrash: it runs
// the session of its spec until it is killed (or done).
func TestCompactionCrashChild(t *testing.T) {
	raw := os.Getenv(compactChildEnv)
	if raw == "" {
		t.Skip("the child of TestCompactionCrash; runs only when it starts it")
	}
	var spec compactSpec
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	s, err := thread.OpenPebble(spec.Dir)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	rt, actor := compactRuntime(t, s, spec.URL, spec.Window)
	_, err = rt.Start(ctx, actor, "c", "Read every file, one a turn.")
	require.NoError(t, err)
}
