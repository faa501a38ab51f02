//go:build linux

package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/seed-7cc7a084/harness/facts"
)

// adapterFunc is an adapter whose work is a function: a command the
// model wrote, doing what it likes to the workspace.
type adapterFunc func() error

func (adapterFunc) Name() string { return "hostile" }

func (f adapterFunc) Execute(context.Context, Request) (facts.Report, error) {
	if err := f(); err != nil {
		return facts.Report{}, err
	}
	return facts.Report{Status: facts.StatusSucceeded}, nil
}

// lchtimes sets the times of rel itself, a link included.
func lchtimes(t *testing.T, root, rel string, when time.Time) {
	t.Helper()
	ts := []unix.Timespec{unix.NsecToTimespec(when.UnixNano()), unix.NsecToTimespec(when.UnixNano())}
	require.NoError(t, unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(root, filepath.FromSlash(rel)), ts, unix.AT_SYMLINK_NOFOLLOW))
}

// TestBoundarySeesEveryChange: a hostile command changes the workspace in
// the ways that could slip past a stat cache, a hash tree or a change
// feed — a rewrite that keeps size and mtime (in the tick of the reading,
// and long after it), a file turned into a link whose target hashes like
// its content, a directory turned into a file and back, the owner execute
// bit alone, an inode used again, a swap, a directory replaced by a
// look-alike, a change through a hard link from outside, a change hidden
// in a flood that overflows the feed's queue. In every mode (the reading
// in memory, a stat cache a new process starts from, the feed, both), with
// the real clock (everything just written is racily clean) and a clock an
// hour ahead (everything is clean: only the stat record tells), the
// Boundary records exactly what two fresh walks before and after see: the
// same hashes, the same changed paths, a manifest that loads back to the
// fresh listing; and the reading after is the next action's before.
func TestBoundarySeesEveryChange(t *testing.T) {
	type step struct {
		name  string
		setup func(t *testing.T, root, outside string)
		do    func(t *testing.T, w *Workspace, root, outside string)
		none  bool // the hash does not count this change
	}
	p := func(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
	keepTimes := func(t *testing.T, root, rel string, change func()) {
		fi, err := os.Lstat(p(root, rel))
		require.NoError(t, err)
		change()
		lchtimes(t, root, rel, fi.ModTime())
	}
	steps := []step{
		{name: "same size, mtime put back", do: func(t *testing.T, _ *Workspace, root, _ string) {
			keepTimes(t, root, "d1/f1", func() { require.NoError(t, os.WriteFile(p(root, "d1/f1"), []byte("FILE 1"), 0o644)) })
		}},
		{name: "file replaced by a link whose target hashes like its content", do: func(t *testing.T, _ *Workspace, root, _ string) {
			content, err := os.ReadFile(p(root, "d2/f2"))
			require.NoError(t, err)
			require.NoError(t, os.Remove(p(root, "d2/f2")))
			require.NoError(t, os.Symlink(string(content), p(root, "d2/f2")))
		}},
		{name: "link retargeted, same length, times put back", setup: func(t *testing.T, root, _ string) {
			require.NoError(t, os.Symlink("d1/f1", p(root, "link")))
		}, do: func(t *testing.T, _ *Workspace, root, _ string) {
			keepTimes(t, root, "link", func() {
				require.NoError(t, os.Remove(p(root, "link")))
				require.NoError(t, os.Symlink("d2/f2", p(root, "link")))
			})
		}},
		{name: "directory replaced by a file of its name", do: func(t *testing.T, _ *Workspace, root, _ string) {
			require.NoError(t, os.RemoveAll(p(root, "d3")))
			require.NoError(t, os.WriteFile(p(root, "d3"), []byte("now a file"), 0o644))
		}},
		{name: "file replaced by a directory of its name", do: func(t *testing.T, _ *Workspace, root, _ string) {
			require.NoError(t, os.Remove(p(root, "top")))
			put(t, root, "top/inside", "inside", 0o644)
		}},
		{name: "owner execute bit set", do: func(t *testing.T, _ *Workspace, root, _ string) {
			require.NoError(t, os.Chmod(p(root, "d1/f1"), 0o744))
		}},
		{name: "owner execute bit cleared", setup: func(t *testing.T, root, _ string) {
			require.NoError(t, os.Chmod(p(root, "d4/f4"), 0o755))
		}, do: func(t *testing.T, _ *Workspace, root, _ string) {
			require.NoError(t, os.Chmod(p(root, "d4/f4"), 0o655))
		}},
		{name: "group write bit only", none: true, do: func(t *testing.T, _ *Workspace, root, _ string) {
			require.NoError(t, os.Chmod(p(root, "d1/f1"), 0o664))
		}},
		{name: "an empty directory", none: true, do: func(t *testing.T, _ *Workspace, root, _ string) {
			require.NoError(t, os.MkdirAll(p(root, "d1/empty/deeper"), 0o755))
		}},
		{name: "removed and made again, same size and mtime", do: func(t *testing.T, _ *Workspace, root, _ string) {
			keepTimes(t, root, "d0/f0", func() {
				require.NoError(t, os.Remove(p(root, "d0/f0")))
				require.NoError(t, os.WriteFile(p(root, "d0/f0"), []byte("FILE 0"), 0o644))
			})
		}},
		{name: "two files of one size and mtime swapped", do: func(t *testing.T, _ *Workspace, root, _ string) {
			when := time.Now().Add(-time.Hour)
			backdate(t, root, "d4/f4", when)
			backdate(t, root, "d4/g4", when)
			require.NoError(t, os.Rename(p(root, "d4/f4"), p(root, "d4/tmp")))
			require.NoError(t, os.Rename(p(root, "d4/g4"), p(root, "d4/f4")))
			require.NoError(t, os.Rename(p(root, "d4/tmp"), p(root, "d4/g4")))
		}},
		{name: "a directory replaced by a look-alike", do: func(t *testing.T, _ *Workspace, root, _ string) {
			require.NoError(t, os.Rename(p(root, "d5"), p(root, "d5.old")))
			require.NoError(t, os.RemoveAll(p(root, "d5.old")))
			put(t, root, "d5/f5", "FILE 5", 0o644)
			put(t, root, "d5/g5", "other 5", 0o644)
			fi, err := os.Stat(p(root, "d1/f1"))
			require.NoError(t, err)
			for _, rel := range []string{"d5/f5", "d5/g5", "d5"} {
				backdate(t, root, rel, fi.ModTime())
			}
		}},
		{name: "a deep tree at once", do: func(t *testing.T, _ *Workspace, root, _ string) {
			put(t, root, "n/e/s/t/e/d/file", "deep", 0o644)
			put(t, root, "n/e/s/other", "other", 0o755)
		}},
		{name: "a change through a hard link from outside, mtime put back", setup: func(t *testing.T, root, outside string) {
			require.NoError(t, os.WriteFile(filepath.Join(outside, "shared"), []byte("linked in"), 0o644))
			require.NoError(t, os.Link(filepath.Join(outside, "shared"), p(root, "d1/hard")))
		}, do: func(t *testing.T, _ *Workspace, root, outside string) {
			o := filepath.Join(outside, "shared")
			fi, err := os.Stat(o)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(o, []byte("LINKED IN"), 0o644))
			require.NoError(t, os.Chtimes(o, fi.ModTime(), fi.ModTime()))
		}},
		{name: "a write through a shared mapping", do: func(t *testing.T, _ *Workspace, root, _ string) {
			f, err := os.OpenFile(p(root, "d2/g2"), os.O_RDWR, 0)
			require.NoError(t, err)
			data, err := unix.Mmap(int(f.Fd()), 0, len("other 2"), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			require.NoError(t, err)
			require.NoError(t, f.Close()) // before the write: no write on a descriptor to report
			copy(data, "OTHER")
			require.NoError(t, unix.Munmap(data))
		}},
		{name: "a .git config planted", do: func(t *testing.T, _ *Workspace, root, _ string) {
			put(t, root, ".git/config", "[core]\n\tfsmonitor = ./x\n", 0o644)
		}},
		{name: "a change hidden in a flood that overflows the feed", do: func(t *testing.T, w *Workspace, root, _ string) {
			b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events")
			require.NoError(t, err)
			var limit int
			_, err = fmt.Sscan(strings.TrimSpace(string(b)), &limit)
			require.NoError(t, err)
			w.feedHold.Lock() // the feed takes no event: the kernel's queue fills
			defer w.feedHold.Unlock()
			// Two files in turn: the kernel folds an event into an
			// identical one queued just before it.
			for i := range limit + 100 {
				require.NoError(t, os.Chmod(p(root, []string{"d0/f0", "d0/g0"}[i%2]), []os.FileMode{0o644, 0o640}[i/2%2]))
			}
			// The queue is full: this change's events are lost.
			keepTimes(t, root, "d3/f3", func() { require.NoError(t, os.WriteFile(p(root, "d3/f3"), []byte("FILE 3"), 0o644)) })
		}},
	}
	for _, clock := range []string{"real", "an hour ahead"} {
		t.Run(clock, func(t *testing.T) {
			forModes(t, func(t *testing.T, m testMode) {
				for _, s := range steps {
					t.Run(s.name, func(t *testing.T) {
						ctx := context.Background()
						root, outside := t.TempDir(), t.TempDir()
						for i := range 6 {
							put(t, root, fmt.Sprintf("d%d/f%d", i, i), fmt.Sprint("file ", i), 0o644)
							put(t, root, fmt.Sprintf("d%d/g%d", i, i), fmt.Sprint("other ", i), 0o644)
						}
						put(t, root, "d3/sub/f", "under d3", 0o644)
						put(t, root, "top", "top", 0o644)
						put(t, root, ".git/HEAD", "ref: refs/heads/main\n", 0o644)
						if s.setup != nil {
							s.setup(t, root, outside)
						}
						blobs := &memBlobs{m: map[string][]byte{}}
						w, err := m.newWorkspace(t, root, WithBlobs(blobs, 0))
						require.NoError(t, err)
						w.feedHold = &sync.RWMutex{}
						if clock != "real" {
							w.now = func() time.Time { return time.Now().Add(time.Hour) }
						}
						b := &Boundary{Observer: w, Granted: []Capability{Write}, Root: root, Blobs: blobs}
						act := func(id string, f func() error) facts.ActionCompleted {
							if m.store && !m.feed {
								// A new process: only the stat cache in the store.
								w.mu.Lock()
								w.tree, w.hash = nil, ""
								w.mu.Unlock()
							}
							req := Request{ActionID: id, Capability: Write, Adapter: "hostile"}
							bg, refused := b.Begin(ctx, req)
							require.Nil(t, refused)
							end := b.Finish(ctx, req, bg, adapterFunc(f))
							require.NotNil(t, end.Completed)
							require.True(t, end.Completed.Observation.Available, end.Completed.Observation.Error)
							return *end.Completed
						}
						act("warm", func() error { return nil })
						act("warm again", func() error { return nil })
						truthBefore := fresh(t, root)
						done := act("hostile", func() error { s.do(t, w, root, outside); return nil })
						truthAfter := fresh(t, root)

						o := done.Observation
						require.Equal(t, truthBefore.Hash, o.Before, "the reading before")
						require.Equal(t, truthAfter.Hash, o.After, "the reading after")
						require.Equal(t, Diff(truthBefore, truthAfter), o.Changed)
						if s.none {
							require.Empty(t, o.Changed)
							require.Equal(t, o.Before, o.After)
						} else {
							require.NotEmpty(t, o.Changed)
							require.Equal(t, facts.EffectObserved, done.EffectState)
						}
						kept, err := LoadManifest(ctx, blobs, o.Manifest)
						require.NoError(t, err)
						require.Equal(t, truthAfter.Files, kept.Files, "the manifest lists what a fresh walk sees")
						require.Equal(t, truthAfter.Hash, kept.Hash)

						next := act("next", func() error { return nil })
						require.Equal(t, truthAfter.Hash, next.Observation.Before, "the reading after is the next one's before")
						require.Empty(t, next.Observation.Changed)
					})
				}
			})
		})
	}
}
