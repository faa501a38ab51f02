package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The observer's tests run in every mode the runtime can observe in: with
// only the reading a Workspace keeps in memory; with a stat cache in a
// store, every observation starting from it as a new process would; with
// the change feed; and with both.
type testMode struct {
	name  string
	store bool
	feed  bool
}

var testModes = []testMode{
	{name: "memory"},
	{name: "store", store: true},
	{name: "feed", feed: true},
	{name: "feed+store", feed: true, store: true},
}

func forModes(t *testing.T, f func(t *testing.T, m testMode)) {
	t.Helper()
	for _, m := range testModes {
		t.Run(m.name, func(t *testing.T) { f(t, m) })
	}
}

// modes records the mode each test workspace runs in.
var modes sync.Map // *Workspace → testMode

// newWorkspace is NewWorkspace in mode m; the workspace is closed when the
// test ends.
func (m testMode) newWorkspace(t testing.TB, root string, opts ...WorkspaceOption) (*Workspace, error) {
	if m.store {
		opts = append([]WorkspaceOption{WithStatCache(newMemMeta())}, opts...)
	}
	if m.feed {
		opts = append(opts, WithChangeFeed(true))
	}
	w, err := NewWorkspace(root, opts...)
	if err != nil {
		return nil, err
	}
	modes.Store(w, m)
	t.Cleanup(func() {
		require.NoError(t, w.Close())
		modes.Delete(w)
	})
	return w, nil
}

func modeOf(w *Workspace) testMode {
	m, _ := modes.Load(w)
	mode, _ := m.(testMode)
	return mode
}

// observe observes w. In the store mode the workspace first forgets its
// reading, as a new process has none; in the feed modes the feed must be
// on afterwards.
func observe(t testing.TB, w *Workspace) Snapshot {
	t.Helper()
	m := modeOf(w)
	if m.store && !m.feed {
		w.mu.Lock()
		w.tree, w.hash, w.listed, w.files = nil, "", nil, nil
		w.mu.Unlock()
	}
	s, err := w.Observe(context.Background())
	require.NoError(t, err)
	if m.feed && feedSupported {
		on, why := w.Feed()
		require.True(t, on, "the feed is off: %v", why)
	}
	return s
}

// plant makes the workspace remember digest for the file at rel, as if it
// had read it there: in its reading, and in its store.
func plant(t testing.TB, w *Workspace, rel, digest string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var replant func(r *dirRec, dir string, parts []string) *dirRec
	replant = func(r *dirRec, dir string, parts []string) *dirRec {
		c := *r
		c.ents = slices.Clone(r.ents)
		j := c.find(parts[0])
		require.GreaterOrEqual(t, j, 0, rel)
		if len(parts) == 1 {
			c.ents[j].Digest = digest
		} else {
			c.ents[j].dir = replant(c.ents[j].dir, join(dir, parts[0]), parts[1:])
		}
		c.finish(w.epoch)
		if w.meta != nil {
			require.NoError(t, w.meta.PutMeta(context.Background(), statNamespace, one(w.recKey(dir), encodeRec(&c))))
		}
		return &c
	}
	w.tree = replant(w.tree, ".", strings.Split(rel, "/"))
	w.hash = treeHash(w.tree.sum)
}

func one(k, v []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) { yield(k, v) }
}

// memMeta is a Meta in a map.
type memMeta struct {
	mu   sync.Mutex
	m    map[string][]byte
	puts int // keys set or deleted
}

func newMemMeta() *memMeta { return &memMeta{m: map[string][]byte{}} }

func (mm *memMeta) GetMeta(_ context.Context, ns string, key []byte) ([]byte, error) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	v, ok := mm.m[ns+"\x00"+string(key)]
	if !ok {
		return nil, fmt.Errorf("meta %q: %w", key, fs.ErrNotExist)
	}
	return bytes.Clone(v), nil
}

func (mm *memMeta) PutMeta(_ context.Context, ns string, kv iter.Seq2[[]byte, []byte]) error {
	if ns == "" {
		return errors.New("no namespace")
	}
	mm.mu.Lock()
	defer mm.mu.Unlock()
	for k, v := range kv {
		mm.puts++
		if v == nil {
			delete(mm.m, ns+"\x00"+string(k))
		} else {
			mm.m[ns+"\x00"+string(k)] = bytes.Clone(v)
		}
	}
	return nil
}

func (mm *memMeta) keys() []string {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	return slices.Sorted(maps.Keys(mm.m))
}
