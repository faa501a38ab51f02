package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// BenchmarkCLIResume runs `harness resume` — a new process, as a person
// runs it — on a parked thread of 100,000 facts and on one of 6, in the
// same workspace, alternating op by op. Both threads record a policy and
// a workspace and wait for the confirmation of a write; the resume finds
// them parked, answers nothing (--no-input) and runs nothing. Both were
// resumed once before the timer starts, so each resumes from the snapshot
// that resume kept, as the Resume that parks a thread keeps one. ratio is the 100,000-fact resume's time over the
// 6-fact one's (aim: ≤ 3).
func BenchmarkCLIResume(b *testing.B) {
	bin, dir, place, store := benchWorkspace(b)
	const long = 100_000
	// Both threads as the stock harness records them: the task with its
	// policy (as harness run posts it), the configuration in the
	// workspace, then turns that read files, and a write waiting for a
	// confirmation.
	parked := harnesstest.Parked{Model: "scripted:none.jsonl", Workspace: stock.WorkspaceName(dir), InputTokens: 1800,
		Policy: &facts.PolicySet{Allow: []string{"read_file"}, By: "tester"}}
	parked.Facts = long
	parked.Append(b, store, "long")
	parked.Facts = 6
	parked.Append(b, store, "short")
	parkCLI(b, place, store, "long", long)
	parkCLI(b, place, store, "short", 6)
	require.NoError(b, store.Close())
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+b.TempDir())
	resume := func(id string, seq int) time.Duration {
		cmd := exec.Command(bin, "resume", id, "--no-input", "-o", "json")
		cmd.Dir, cmd.Env = dir, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			b.Fatal(err)
		}
		var res drive.State // the one document of a thread
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Status != harness.StatusParked || res.Head.Seq != uint64(seq) {
			b.Fatalf("resume %s: %+v (%v), want parked at seq %d\nstdout: %s\nstderr: %s", id, res, err, seq, out.String(), errb.String())
		}
		return d
	}
	resume("long", long)
	resume("short", 6)
	var longT, shortT time.Duration
	for b.Loop() {
		longT += resume("long", long)
		shortT += resume("short", 6)
	}
	n := float64(b.N)
	b.ReportMetric(float64(longT)/n/float64(time.Millisecond), "ms/resume@100k")
	b.ReportMetric(float64(shortT)/n/float64(time.Millisecond), "ms/resume@6")
	b.ReportMetric(float64(longT)/float64(shortT), "ratio")
}

// parkCLI resumes the thread id of n facts with the stock harness of
// place, as the Resume that parked it would have: it stays parked, runs
// nothing, and keeps the thread's snapshot.
func parkCLI(b testing.TB, place stock.Place, store thread.Store, id string, n int) {
	cfg, err := harness.NewConfig(harness.WithWorkspace(stock.WorkspaceName(place.Root)))
	require.NoError(b, err)
	st, err := stock.NewStock(place, cfg)
	require.NoError(b, err)
	defer st.Close()
	svc, err := st.Services(nil, stock.BlobsOf(store))
	require.NoError(b, err)
	rt, err := harness.NewRuntime(store, svc, st.Config)
	require.NoError(b, err)
	out, err := rt.Resume(context.Background(), st.Actor, id)
	require.NoError(b, err)
	require.Equal(b, harness.StatusParked, out.Status, out.Reason)
	require.EqualValues(b, n, out.Seq)
}

// benchWorkspace is the built harness and a fresh workspace with its store
// open in this process, for a benchmark to fill and then close before the
// command runs.
func benchWorkspace(b *testing.B) (bin, dir string, place stock.Place, store thread.Store) {
	b.Helper()
	bin, err := exec.LookPath("harness")
	require.NoError(b, err, "TestMain puts harness on $PATH")
	dir = b.TempDir()
	place = stock.Place{Root: dir, Store: filepath.Join(dir, ".harness")}
	store, err = thread.OpenPebble(place.DB())
	require.NoError(b, err)
	return bin, dir, place, store
}
