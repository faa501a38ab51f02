package harness_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/thread"
)

// parkedRuntime is the runtime the resume benchmarks resume a parked
// thread with: a model and tools that fail the benchmark if anything runs.
func parkedRuntime(t testing.TB, s thread.Store) (*harness.Runtime, harness.Actor) {
	m := modelFunc(func(context.Context, model.Request) (model.Decision, error) {
		return model.Decision{}, errors.New("a parked thread called the model")
	})
	tools := codingTools(t, func(context.Context, string, string) (facts.Report, error) {
		return facts.Report{}, errors.New("a parked thread ran a tool")
	})
	cfg, err := harness.NewConfig()
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(s, harness.Services{Model: m, Tools: tools}, cfg)
	require.NoError(t, err)
	return rt, actor
}

// resumeParked resumes the parked thread id once, as a new process would
// (a new Thread, which reads the thread anew), and fails unless it stays
// parked at seq n with nothing run.
func resumeParked(t testing.TB, rt *harness.Runtime, actor harness.Actor, id string, n int) {
	out, err := rt.Thread(actor, id).Resume(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != harness.StatusParked || out.Steps != 0 || out.Seq != uint64(n) {
		t.Fatalf("resume of %s: %+v, want parked at seq %d with no step", id, out, n)
	}
}

// BenchmarkResumeSnapshot resumes the parked 100,000-fact thread of
// BenchmarkResumeParked as a new process would, now from the snapshot the
// Resume that parked it kept: it reads the snapshot and the one fact it
// stands for, restores the parts, projects, and runs nothing. The baseline
// is the resume, the same way, of a 5-fact thread parked the same way;
// ratio is the 100,000-fact resume's time over the 5-fact one's (aim:
// ≤ 3, and ≤ 2 ms). The two alternate, op by op.
//
// The rss sub-benchmark measures the peak resident memory of a process
// that resumes the 100,000-fact thread against one that only opens the
// store (each a re-executed test binary, the median of five); ratio is the
// first's over the second's (aim: ≤ 1.2). MB-rss-fold is, for comparison,
// a process that resumes it folding every fact (a store keeping no
// snapshots).
func BenchmarkResumeSnapshot(b *testing.B) {
	b.Run("time", benchResumeSnapshotTime)
	b.Run("rss", benchResumeSnapshotRSS)
}

func benchResumeSnapshotTime(b *testing.B) {
	s := openBenchStore(b)
	parkedThread(b, s, "long", "tool-loop", benchFacts)
	parkedThread(b, s, "short", "tool-loop", 5)
	rt, actor := parkedRuntime(b, s)
	// The Resumes that park them keep their snapshots.
	resumeParked(b, rt, actor, "long", benchFacts)
	resumeParked(b, rt, actor, "short", 5)

	var longT, shortT time.Duration
	op := 0
	for b.Loop() {
		op++
		long := func() {
			t0 := time.Now()
			resumeParked(b, rt, actor, "long", benchFacts)
			longT += time.Since(t0)
		}
		short := func() {
			b.StopTimer()
			defer b.StartTimer()
			t0 := time.Now()
			resumeParked(b, rt, actor, "short", 5)
			shortT += time.Since(t0)
		}
		if op%2 == 0 {
			long()
			short()
		} else {
			short()
			long()
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(time.Millisecond) }
	b.ReportMetric(ms(longT), "ms/resume@100k")
	b.ReportMetric(ms(shortT), "ms/resume@5")
	b.ReportMetric(float64(longT)/float64(shortT), "ratio")
}

// rssChildEnv, when set, makes TestResumeRSSChild a child of
// benchResumeSnapshotRSS: its value is an rssSpec in JSON.
const rssChildEnv = "HARNESS_RSS_CHILD"

type rssSpec struct {
	Dir    string
	Resume bool // resume the long thread; else only open the store
	Blind  bool // resume it on the store as one that keeps no snapshots
}

// TestResumeRSSChild opens the store of its spec and, when asked, resumes
// the parked thread "long" in it, then exits: its parent reads its peak
// resident memory.
func TestResumeRSSChild(t *testing.T) {
	raw := os.Getenv(rssChildEnv)
	if raw == "" {
		t.Skip("the child of BenchmarkResumeSnapshot/rss; runs only when it starts it")
	}
	var spec rssSpec
	require.NoError(t, json.Unmarshal([]byte(raw), &spec))
	s, err := thread.OpenPebble(spec.Dir)
	require.NoError(t, err)
	defer func() {
		require.NoError(t, s.Close())
		// The peak of this process's own memory: VmHWM, not getrusage's
		// maxrss, which counts the memory of the process that executed
		// this one (the parent, forked with its memory shared).
		status, err := os.ReadFile("/proc/self/status")
		require.NoError(t, err)
		for _, line := range strings.Split(string(status), "\n") {
			if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				fmt.Printf("peak-rss-kb %s\n", strings.TrimSuffix(strings.TrimSpace(kb), " kB"))
			}
		}
	}()
	if spec.Resume {
		var store thread.Store = s
		if spec.Blind {
			store = blind{s}
		}
		rt, actor := parkedRuntime(t, store)
		resumeParked(t, rt, actor, "long", benchFacts)
	}
}

// childRSS runs TestResumeRSSChild on spec and returns its peak resident
// memory, in bytes, as it says it.
func childRSS(b *testing.B, spec rssSpec) int64 {
	raw, err := json.Marshal(spec)
	require.NoError(b, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeRSSChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), rssChildEnv+"="+string(raw))
	out, err := cmd.CombinedOutput()
	require.NoError(b, err, "%s", out)
	for _, line := range strings.Split(string(out), "\n") {
		if kb, ok := strings.CutPrefix(line, "peak-rss-kb "); ok {
			n, err := strconv.ParseInt(kb, 10, 64)
			require.NoError(b, err)
			return n * 1024
		}
	}
	b.Fatalf("the child did not say its peak memory:\n%s", out)
	return 0
}

func benchResumeSnapshotRSS(b *testing.B) {
	dir := b.TempDir()
	s, err := thread.OpenPebble(dir)
	require.NoError(b, err)
	parkedThread(b, s, "long", "tool-loop", benchFacts)
	rt, actor := parkedRuntime(b, s)
	resumeParked(b, rt, actor, "long", benchFacts)
	require.NoError(b, s.Close())

	var opens, resumes, folds []int64
	for b.Loop() {
		for range 5 {
			opens = append(opens, childRSS(b, rssSpec{Dir: dir}))
			resumes = append(resumes, childRSS(b, rssSpec{Dir: dir, Resume: true}))
			folds = append(folds, childRSS(b, rssSpec{Dir: dir, Resume: true, Blind: true}))
		}
	}
	median := func(xs []int64) float64 {
		slices.Sort(xs)
		return float64(xs[len(xs)/2])
	}
	open, resume := median(opens), median(resumes)
	b.ReportMetric(open/(1<<20), "MB-rss-open")
	b.ReportMetric(resume/(1<<20), "MB-rss-resume")
	b.ReportMetric(median(folds)/(1<<20), "MB-rss-fold")
	b.ReportMetric(resume/open, "ratio")
}
