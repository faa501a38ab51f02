package action

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// gitTree is a committed tree of small source-like files, 100 to a
// directory, built once per process and size.
type gitTree struct {
	root  string
	files int
	err   error
}

var (
	gitTreesMu sync.Mutex
	gitTrees   = map[int]*gitTree{}
)

// benchGitTree returns the tree of n files, building it the first time:
// written, committed, refreshed by one git status, and aged past the racy
// window so both git and the observer are measured in their steady state.
func benchGitTree(b *testing.B, n int) *gitTree {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	gitTreesMu.Lock()
	defer gitTreesMu.Unlock()
	if tr, ok := gitTrees[n]; ok {
		if tr.err != nil {
			b.Fatal(tr.err)
		}
		return tr
	}
	tr := &gitTree{files: n}
	gitTrees[n] = tr
	tr.root, tr.err = os.MkdirTemp("", fmt.Sprintf("harness-bench-%d-", n))
	if tr.err == nil {
		tr.err = tr.build(n)
	}
	if tr.err != nil {
		b.Fatal(tr.err)
	}
	return tr
}

func (tr *gitTree) build(n int) error {
	for i := range n {
		dir := filepath.Join(tr.root, fmt.Sprintf("pkg%03d", (i/100)%100), fmt.Sprintf("sub%03d", i/10_000))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
		}
		content := fmt.Sprintf("package pkg%03d\n\n// File %d of the benchmark tree.\nfunc F%d() int { return %d }\n", (i/100)%100, i, i, i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%06d.go", i)), []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		// No gc in the background after the commit: it writes
		// .git/info/refs while the benchmark observes.
		{"config", "gc.auto", "0"},
		{"config", "maintenance.auto", "false"},
		{"add", "."},
		{"-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "tree"},
		{"status", "--porcelain"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = tr.root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	// The observation enters .git too: what git wrote is as fresh as the
	// tree, so the racy window counts from its last command.
	done := time.Now()
	time.Sleep(time.Until(done.Add(DefaultRacyWindow + 100*time.Millisecond)))
	// git's index is racy too: an entry whose file is not older than the
	// index (to the second, as Debian's git compares) is hashed again by
	// every status that does not write the index — and the measured
	// status does not (--no-optional-locks). The tree was written,
	// committed and refreshed within a second or two, so a status then
	// hashed most of the tree each time (8-9 ms at 1k files against 2.8
	// ms). One status with the index's lock, now that the tree is old,
	// writes an index that is newer than every file, as a person's
	// checkout has; the racy window then counts from it.
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = tr.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git status: %v: %s", err, out)
	}
	time.Sleep(DefaultRacyWindow + 100*time.Millisecond)
	return nil
}

// observedBlock is how many actions, and how many git runs, make one
// block of BenchmarkObservedAction.
const observedBlock = 5

// observedAlone is how many actions BenchmarkObservedAction runs after
// the timed ones with no git between them (boundary-alone-ms-med).
const observedAlone = 20

// gitStatus times `git status --porcelain` in the tree.
func (tr *gitTree) gitStatus(b *testing.B) time.Duration {
	wall, _ := tr.gitStatusTimes(b)
	return wall
}

// gitStatusTimes runs `git status --porcelain` in the tree and returns
// its wall time and the CPU time (user and system) the process used.
// --no-optional-locks: git does the same work (it compares every entry
// of its index with the tree and looks for untracked files) but does not
// take the index's lock, which would make and remove .git/index.lock in
// the observed tree — a change of the workspace the observation would
// then measure as part of the next action.
func (tr *gitTree) gitStatusTimes(b *testing.B) (wall, cpu time.Duration) {
	start := time.Now()
	cmd := exec.Command("git", "--no-optional-locks", "status", "--porcelain")
	cmd.Dir = tr.root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git status: %v: %s", err, out)
	}
	return time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// benchSizes are the trees the observation benchmarks run on; the 100k
// tree takes its time to build and is there when HARNESS_BENCH_BIG=1.
func benchSizes() []int {
	if os.Getenv("HARNESS_BENCH_BIG") == "1" {
		return []int{1_000, 10_000, 100_000}
	}
	return []int{1_000, 10_000}
}

// writeFile is a write_file-like adapter: it rewrites one file, each time
// with other content of the same size.
type writeFile struct {
	path  string
	round int
	took  time.Duration
}

func (a *writeFile) Name() string { return "write_file" }

func (a *writeFile) Execute(context.Context, Request) (facts.Report, error) {
	start := time.Now()
	a.round++
	err := os.WriteFile(a.path, fmt.Appendf(nil, "ttl_seconds = %06d\n", a.round), 0o644)
	a.took += time.Since(start)
	return facts.Report{Status: facts.StatusSucceeded}, err
}

func openBenchStore(b *testing.B, dir string) *thread.PebbleStore {
	s, err := thread.OpenPebble(dir)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkObservedAction is the boundary's overhead on one write_file-like
// action — the observation before, the observation after, the inventory,
// the manifest kept as a delta in a real Pebble store and the changed
// file kept as a blob — against `git status --porcelain` on the same
// committed tree, as many runs as actions, in alternate blocks of
// observedBlock (both see the same change; each side runs after itself
// but for the first of a block, so neither measures the caches the other
// left cold: git's walk of 100k files leaves everything cold for what
// runs next, and an action leaves git's caches as they were). The
// written file exists and its directory has settled (older than the
// racy window) before the first action measured, at every size. ratio
// is the boundary's time (the adapter's own write left out) over git's;
// below 1 the boundary costs less than one git status. With the change
// feed (feed=on) the observations look only at what the feed reported,
// and the inventory and the manifest come from the directories that
// changed: the boundary's time should not grow with the tree. The
// boundary's time per action is also given as min/median/max over the
// iterations (ms), and ratio-med is the median over git's median;
// boundary-cold-ms-med is the median of the first action of each block,
// the one right after git's. boundary-alone-ms-med is the median of
// observedAlone more actions run after the timed ones with no git between
// them: what the boundary's own work costs when nothing else walks the
// tree, which is the part that should not grow with it (git's walk of a
// bigger tree leaves more of the kernel's and the CPU's caches cold for
// the actions after it); alone-ratio-med is it over git's median.
// cpu-ratio is the CPU time the process used over the iterations (the
// boundary's and whatever else ran in it meanwhile, the store's
// background work too) over the CPU time the git processes used: on a
// loaded machine it moves far less than the wall-clock ratios, which
// measure the scheduler as much as the work.
//
//	go test ./action -run '^$' -bench ObservedAction -benchtime=20x
//	HARNESS_BENCH_BIG=1 go test ./action -run '^$' -bench ObservedAction -benchtime=20x
func BenchmarkObservedAction(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		for _, feed := range []bool{false, true} {
			b.Run(fmt.Sprintf("files=%d/feed=%v", n, map[bool]string{false: "off", true: "on"}[feed]), func(b *testing.B) {
				tr := benchGitTree(b, n)
				store := openBenchStore(b, b.TempDir())
				defer store.Close()
				w, err := NewWorkspace(tr.root, WithBlobs(store, 0), WithChangeFeed(feed))
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				bd := &Boundary{Observer: w, Granted: []Capability{Write}, Root: tr.root, Blobs: store}
				target := filepath.Join(tr.root, "pkg000", "sub000", "cache.toml")
				ad := &writeFile{path: target}
				defer os.Remove(target)
				act := func(i int) {
					req := Request{ActionID: fmt.Sprint("a", i), Capability: Write, Adapter: ad.Name()}
					bg, refused := bd.Begin(ctx, req)
					if refused != nil {
						b.Fatal(refused.Report.Error)
					}
					done := *bd.Finish(ctx, req, bg, ad).Completed
					if done.EffectState != facts.EffectObserved || len(done.Observation.Changed) != 1 {
						b.Fatalf("effect %s, changed %v, %s", done.EffectState, done.Observation.Changed, done.Observation.Error)
					}
				}
				act(0) // the session's first action: the first observation, the first whole manifest
				if on, why := w.Feed(); on != feed {
					b.Fatalf("feed %v: %v", on, why)
				}
				// act(0) made the file: its directory's listing is
				// racily clean for the racy window and listed again by
				// every observation until then — for all 20 actions on a
				// small tree, whose git status is quick, and for a few on
				// a big one. Wait it out, so that every size measures
				// the same thing: a write of a file that exists.
				time.Sleep(DefaultRacyWindow + 100*time.Millisecond)
				var boundary, cold, git []time.Duration
				var cpu, gitCPU time.Duration
				// The two sides run in alternate blocks, each in its own
				// steady state: an action right after a git status finds
				// the caches git's walk of the whole tree left cold (the
				// adapter's own write, which is not the boundary's, took
				// 2-4x as long then at 100k files) while git after an
				// action finds them as it left them. The first action
				// of each block, after git's, is reported apart (cold).
				gitBlock := func() {
					for range observedBlock {
						wall, c := tr.gitStatusTimes(b)
						git = append(git, wall)
						gitCPU += c
					}
				}
				i := 0
				for b.Loop() {
					i++
					ad.took = 0
					c0 := processCPU()
					start := time.Now()
					act(i)
					d := time.Since(start) - ad.took
					boundary = append(boundary, d)
					cpu += processCPU() - c0
					if (i-1)%observedBlock == 0 {
						cold = append(cold, d)
					}
					if i%observedBlock == 0 {
						b.StopTimer()
						gitBlock()
						b.StartTimer()
					}
				}
				if i%observedBlock != 0 {
					gitBlock()
				}
				b.StopTimer()
				var alone []time.Duration
				for range observedAlone {
					i++
					ad.took = 0
					start := time.Now()
					act(i)
					alone = append(alone, time.Since(start)-ad.took)
				}
				_, aloneMed, _ := spread(alone)
				_, gitMed, _ := spread(git)
				b.ReportMetric(aloneMed, "boundary-alone-ms-med")
				b.ReportMetric(aloneMed/max(gitMed, 1e-9), "alone-ratio-med")
				_, coldMed, _ := spread(cold)
				b.ReportMetric(coldMed, "boundary-cold-ms-med")
				reportSpread(b, "boundary", boundary, git)
				if cpu > 0 && gitCPU > 0 {
					b.ReportMetric(float64(cpu)/float64(gitCPU), "cpu-ratio")
				}
			})
		}
	}
}

// reportSpread reports the samples of what (ms: min, median, max and
// mean — the mean counts what one action in many costs, a whole manifest
// say, which the median leaves out), the median of the baseline's
// (base-ms-med), ratio (the sum of the samples over the sum of the
// baseline's) and ratio-med (median over median).
func reportSpread(b *testing.B, what string, samples, base []time.Duration) {
	b.Helper()
	lo, med, hi := spread(samples)
	_, bmed, _ := spread(base)
	b.ReportMetric(lo, what+"-ms-min")
	b.ReportMetric(med, what+"-ms-med")
	b.ReportMetric(hi, what+"-ms-max")
	b.ReportMetric(bmed, "base-ms-med")
	var sum, bsum time.Duration
	for _, d := range samples {
		sum += d
	}
	for _, d := range base {
		bsum += d
	}
	b.ReportMetric(float64(sum)/float64(len(samples))/float64(time.Millisecond), what+"-ms-mean")
	b.ReportMetric(float64(sum)/float64(max(bsum, 1)), "ratio")
	b.ReportMetric(med/max(bmed, 1e-9), "ratio-med")
}

// spread is the least, the median and the greatest of ds, in ms.
func spread(ds []time.Duration) (lo, med, hi float64) {
	if len(ds) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return ms(s[0]), ms(s[len(s)/2]), ms(s[len(s)-1])
}

// BenchmarkFirstObservation is a new process's first observation — a
// new store handle and a new Workspace — of a tree an earlier process
// observed, with the stat cache it left in the store, against `git
// status --porcelain` on the same tree. ratio is the observation's time
// over git's.
//
//	HARNESS_BENCH_BIG=1 go test ./action -run '^$' -bench FirstObservation -benchtime=5x
func BenchmarkFirstObservation(b *testing.B) {
	ctx := context.Background()
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			tr := benchGitTree(b, n)
			dir := b.TempDir()
			store := openBenchStore(b, dir)
			w, err := NewWorkspace(tr.root, WithBlobs(store, 0))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := w.Observe(ctx); err != nil {
				b.Fatal(err)
			}
			if err := store.Close(); err != nil {
				b.Fatal(err)
			}
			var obs, git time.Duration
			i := 0
			for b.Loop() {
				i++
				b.StopTimer()
				store := openBenchStore(b, dir)
				b.StartTimer()
				start := time.Now()
				w, err := NewWorkspace(tr.root, WithBlobs(store, 0))
				if err != nil {
					b.Fatal(err)
				}
				r := countReads(w)
				if _, err := w.Observe(ctx); err != nil {
					b.Fatal(err)
				}
				obs += time.Since(start)
				b.StopTimer()
				if read := r.take(); len(read) != 0 {
					b.Fatalf("a new process read %d files its cache vouched for (%v…)", len(read), read[0])
				}
				if err := store.Close(); err != nil {
					b.Fatal(err)
				}
				git += tr.gitStatus(b)
				b.StartTimer()
			}
			b.ReportMetric(float64(obs.Microseconds())/1000/float64(i), "observe-ms/op")
			b.ReportMetric(float64(git.Microseconds())/1000/float64(i), "git-ms/op")
			b.ReportMetric(float64(obs)/float64(git), "ratio")
		})
	}
}

// TestMain removes the benchmark trees when the tests and benchmarks are
// done.
func TestMain(m *testing.M) {
	code := m.Run()
	gitTreesMu.Lock()
	for _, tr := range gitTrees {
		if tr.root != "" {
			os.RemoveAll(tr.root)
		}
	}
	gitTreesMu.Unlock()
	os.Exit(code)
}
