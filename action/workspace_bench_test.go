package action

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The benchmark tree: benchFiles files in 10×10 directories, sizes between
// 2,000 and 18,000 bytes (10,000 on average: about 100 MB), of incompressible
// bytes from a fixed seed, committed to a git repository.
const (
	benchFiles   = 10_000
	benchChanged = 10
)

type benchTree struct {
	root    string
	changed []string // the files each "10 changed" iteration rewrites
	orig    map[string][]byte
	bytes   int64
	done    time.Time // when the last file was written
}

func makeBenchTree(b *testing.B) *benchTree {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	tr := &benchTree{root: b.TempDir(), orig: map[string][]byte{}}
	src := rand.NewChaCha8([32]byte{'h', 'a', 'r', 'n', 'e', 's', 's'})
	r := rand.New(src)
	buf := make([]byte, 18_000)
	for i := range benchFiles {
		rel := fmt.Sprintf("pkg%d/sub%d/file%05d.dat", i%10, (i/10)%10, i)
		data := buf[:2_000+r.IntN(16_001)]
		_, _ = src.Read(data)
		p := filepath.Join(tr.root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		tr.bytes += int64(len(data))
		if i%(benchFiles/benchChanged) == 0 {
			tr.changed = append(tr.changed, p)
			tr.orig[p] = append([]byte(nil), data...)
		}
	}
	tr.done = time.Now()
	tr.git(b, "init", "-q")
	tr.git(b, "-c", "core.looseCompression=0", "add", ".")
	tr.git(b, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "tree")
	tr.git(b, "status", "--porcelain") // let git refresh its racily clean index entries
	// Let every file age past the racy window, so the observer's steady state
	// is measured, not its first minutes.
	time.Sleep(time.Until(tr.done.Add(DefaultRacyWindow + 100*time.Millisecond)))
	return tr
}

func (tr *benchTree) git(b *testing.B, args ...string) {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = tr.root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v: %s", args, err, out)
	}
}

// change rewrites the same benchChanged files, each time with content that
// differs from the last time and from the commit, and the same size — so
// git's set of modified files stays at benchChanged, and both git and the
// observer have those files to hash again.
func (tr *benchTree) change(b *testing.B, round int) {
	b.Helper()
	for _, p := range tr.changed {
		data := append([]byte(nil), tr.orig[p]...)
		data[0] ^= byte(1 + round%2)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWorkspace observes a generated 10,000-file, ~100 MB tree and
// runs `git status --porcelain` on the same tree in the same iterations,
// paired, so both see the same changes and the same machine load. ns/op is
// the observation's; git-ns/op is git's, and x-git-status the ratio of the
// two (below 1: the observation was faster).
//
//   - full: a fresh Workspace reads every file (git, with its index, reads
//     none: this is the price of an observation without a cache);
//   - 10-changed: the same 10 files are rewritten, then observed again;
//   - unchanged: nothing changed since the last observation.
func BenchmarkWorkspace(b *testing.B) {
	tr := makeBenchTree(b)
	ctx := context.Background()
	gitStatus := func(b *testing.B) time.Duration {
		start := time.Now()
		cmd := exec.Command("git", "status", "--porcelain")
		cmd.Dir = tr.root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git status: %v: %s", err, out)
		}
		return time.Since(start)
	}
	observe := func(b *testing.B, w *Workspace) {
		if _, err := w.Observe(ctx); err != nil {
			b.Fatal(err)
		}
	}
	newWorkspace := func(b *testing.B) *Workspace {
		w, err := NewWorkspace(tr.root)
		if err != nil {
			b.Fatal(err)
		}
		return w
	}
	// paired times observe in each iteration after prepare and git status,
	// which are not timed but measured.
	paired := func(b *testing.B, prepare func(round int), observe func()) {
		var git, total time.Duration
		n := 0
		for b.Loop() {
			b.StopTimer()
			if prepare != nil {
				prepare(n)
			}
			git += gitStatus(b)
			b.StartTimer()
			start := time.Now()
			observe()
			total += time.Since(start)
			n++
		}
		b.ReportMetric(float64(git.Nanoseconds())/float64(n), "git-ns/op")
		b.ReportMetric(float64(total)/float64(git), "x-git-status")
	}

	b.Run("full", func(b *testing.B) {
		b.SetBytes(tr.bytes)
		paired(b, nil, func() { observe(b, newWorkspace(b)) })
	})
	b.Run("10-changed", func(b *testing.B) {
		w := newWorkspace(b)
		observe(b, w)
		paired(b, func(round int) { tr.change(b, round) }, func() { observe(b, w) })
	})
	b.Run("unchanged", func(b *testing.B) {
		w := newWorkspace(b)
		// The files the last benchmark changed are racily clean: let them
		// age, then read them once more.
		observe(b, w)
		time.Sleep(DefaultRacyWindow + 100*time.Millisecond)
		observe(b, w)
		paired(b, nil, func() { observe(b, w) })
	})
}
