//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// suiteScript reads notes.txt, sets the TTL, notes it, and is done.
const suiteScript = `{"text": "Reading.", "tool_calls": [{"id": "r", "name": "read_file", "args": "{\"path\":\"notes.txt\"}"}]}
{"text": "Setting.", "tool_calls": [{"id": "w", "name": "write_file", "args": "{\"path\":\"cache.toml\",\"content\":\"ttl_seconds = 300\\n\"}"}]}
{"text": "Noting.", "tool_calls": [{"id": "n", "name": "write_file", "args": "{\"path\":\"notes.txt\",\"content\":\"ttl is 300\\n\"}"}]}
{"text": "Done."}`

// suiteServer is an OpenAI-compatible server whose model makes the
// suite script's first two calls, then runs a command instead of the
// third. It counts the requests of each (task, turn).
type suiteServer struct {
	mu    sync.Mutex     // guards asked and total
	asked map[string]int // "task\x00turn" → requests; never iterated for output order
	total int
}

func (s *suiteServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	task, turn, err := chatRequest(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.asked[task+"\x00"+fmt.Sprint(turn)]++
	s.total++
	s.mu.Unlock()
	time.Sleep(15 * time.Millisecond) // a model takes a while: the kill lands midway
	calls := map[int]string{
		1: `{"id":"a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}}`,
		2: `{"id":"b","type":"function","function":{"name":"write_file","arguments":"{\"content\":\"ttl_seconds = 300\\n\",\"path\":\"cache.toml\"}"}}`,
		3: `{"id":"c","type":"function","function":{"name":"run_command","arguments":"{\"command\":\"cat cache.toml\"}"}}`,
	}
	writeChatTurn(w, calls[turn])
}

// requests is how many requests the server has had (a request the killed
// process sent may still be being served).
func (s *suiteServer) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

func (s *suiteServer) count(task string, turn int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[task+"\x00"+fmt.Sprint(turn)]
}

// recordThreads records n threads in the workspace dir with the suite
// script, each approved as --approve all does.
func recordThreads(t *testing.T, dir string, n int) {
	t.Helper()
	ctx := context.Background()
	p, err := stock.Locate(dir, "")
	require.NoError(t, err)
	store, err := p.OpenStore(ctx, 0, true)
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:a.jsonl"))
	require.NoError(t, err)
	st, err := stock.NewStock(p, cfg)
	require.NoError(t, err)
	defer st.Close()
	for i := 1; i <= n; i++ {
		m, err := model.ParseScript("a", []byte(suiteScript))
		require.NoError(t, err)
		svc, err := st.Services(m, stock.BlobsOf(store))
		require.NoError(t, err)
		rt, err := harness.NewRuntime(store, svc, cfg)
		require.NoError(t, err)
		th := rt.Thread(st.Actor, fmt.Sprintf("t%02d", i))
		_, err = th.Start(ctx, fmt.Sprintf("task %02d", i))
		require.NoError(t, err)
		all, err := drive.NewApproval("all", nil, nil)
		require.NoError(t, err)
		for {
			s, err := drive.Inspect(ctx, th)
			require.NoError(t, err)
			if s.Status != harness.StatusParked {
				require.Equal(t, harness.StatusDone, s.Status)
				break
			}
			_, posted, err := drive.ApplyApproval(ctx, th, all, s.Waits)
			require.NoError(t, err)
			require.NotZero(t, posted)
			_, err = th.Resume(ctx)
			require.NoError(t, err)
		}
		if c, ok := svc.Observer.(io.Closer); ok {
			require.NoError(t, c.Close())
		}
	}
}

// recordedTurns reads, for each rerun thread of the store, how many model
// turns it recorded.
func recordedTurns(t *testing.T, dir string) map[string]int {
	t.Helper()
	ctx := context.Background()
	p, err := stock.Locate(dir, "")
	require.NoError(t, err)
	store, err := thread.OpenPebble(p.DB())
	require.NoError(t, err)
	defer func() { require.NoError(t, store.Close()) }()
	out := map[string]int{}
	heads, err := store.Threads(ctx, thread.ThreadsPage{})
	require.NoError(t, err)
	for _, h := range heads {
		if !strings.Contains(h.Thread, "-rr-") {
			continue
		}
		out[h.Thread] = 0
		forks := 0
		for f, err := range store.Read(ctx, h.Thread, 1) {
			require.NoError(t, err)
			switch f.Kind {
			case facts.KindModelTurn:
				out[h.Thread]++
			case facts.KindThreadForked:
				forks++
			}
		}
		require.Equal(t, 1, forks, "%s was begun once", h.Thread)
	}
	return out
}

// TestRerunSuiteKilledAndResumed: a suite over 50 recorded threads,
// killed with SIGKILL midway and run again, finishes with its table and
// asks the model no turn a rerun had recorded before the kill: no rerun
// runs twice.
func TestRerunSuiteKilledAndResumed(t *testing.T) {
	const n = 50
	dir := workspace(t, map[string]string{"notes.txt": "line one\n"})
	recordThreads(t, dir, n)

	srv := &suiteServer{asked: map[string]int{}}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+t.TempDir(), "OPENAI_BASE_URL="+hs.URL+"/v1", "OPENAI_API_KEY=k")
	args := []string{"rerun", "--all", "--status", "done", "--model", "openai:gpt-4.1-mini", "--concurrency", "3", "-o", "json"}

	cmd := exec.Command(harnessBin(t), args...)
	cmd.Dir, cmd.Env = dir, env
	var out harnesstest.LockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return srv.total >= 60
	}, 60*time.Second, 5*time.Millisecond, "the suite never got going:\n%s", &out)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, cmd.Wait())

	before := recordedTurns(t, dir)
	require.NotEmpty(t, before, "the suite had begun reruns")
	require.Less(t, len(before), n+1)
	asked := map[string]int{}
	for id := range before {
		task := "task " + strings.TrimPrefix(strings.Split(id, "-rr-")[0], "t")
		for turn := 1; turn <= 3; turn++ {
			asked[id+"\x00"+fmt.Sprint(turn)] = srv.count(task, turn)
		}
	}
	unfinished := 0
	for _, turns := range before {
		if turns < 3 {
			unfinished++
		}
	}
	t.Logf("killed after %d requests: %d reruns begun, %d of them unfinished", srv.requests(), len(before), unfinished)

	again := exec.Command(harnessBin(t), args...)
	again.Dir, again.Env = dir, env
	b, err := again.Output()
	require.NoError(t, err, "%s", b)
	var res struct {
		Rows []struct {
			Thread string `json:"thread"`
			Rerun  string `json:"rerun"`
			Again  bool   `json:"again"`
			Report struct {
				Verdict    string `json:"verdict"`
				DivergedAt int    `json:"diverged_at"`
				Served     int    `json:"served"`
			} `json:"report"`
			Err string `json:"error"`
		} `json:"rows"`
	}
	require.NoError(t, json.Unmarshal(b, &res), "%s", b)
	require.Len(t, res.Rows, n, "the table has every thread, no rerun of a rerun")
	for i, r := range res.Rows {
		require.Equal(t, fmt.Sprintf("t%02d", i+1), r.Thread)
		require.Empty(t, r.Err)
		require.Equal(t, "diverged", r.Report.Verdict, r.Thread)
		require.Equal(t, 3, r.Report.DivergedAt, r.Thread)
		require.Equal(t, 2, r.Report.Served, r.Thread)
		_, begun := before[r.Rerun]
		require.Equal(t, begun, r.Again, r.Thread)
	}
	// No turn recorded before the kill was asked again; every turn was
	// asked at most once more than before (the one in flight at the kill).
	for id, turns := range before {
		task := "task " + strings.TrimPrefix(strings.Split(id, "-rr-")[0], "t")
		for turn := 1; turn <= 3; turn++ {
			was, now := asked[id+"\x00"+fmt.Sprint(turn)], srv.count(task, turn)
			if turn <= turns {
				require.Equal(t, was, now, "%s turn %d was recorded before the kill: not asked again", id, turn)
			}
		}
	}
	for i := 1; i <= n; i++ {
		for turn := 1; turn <= 3; turn++ {
			require.LessOrEqual(t, srv.count(fmt.Sprintf("task %02d", i), turn), 2)
		}
	}
	after := recordedTurns(t, dir)
	require.Len(t, after, n)
	for id, turns := range after {
		require.Equal(t, 3, turns, id)
	}

	// A third run reruns nothing: no request reaches the model.
	total := srv.requests()
	third := exec.Command(harnessBin(t), args...)
	third.Dir, third.Env = dir, env
	b, err = third.Output()
	require.NoError(t, err, "%s", b)
	require.Equal(t, total, srv.requests())
}
