package fold_test

import (
	"errors"
	"fmt"
	"iter"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// counter enables "<name>/<n+1>" after n facts it saw, and keeps n in its
// snapshots; restored, it can read the facts it stands for again.
type counter struct {
	name    string
	version uint32
	seen    uint64
	causes  []string // the causes it saw, read back from the prefix when asked
	prefix  fold.Prefix
}

func (c *counter) Name() string { return c.name }
func (c *counter) Step(f facts.Fact) error {
	c.seen++
	c.causes = append(c.causes, f.Cause)
	return nil
}
func (c *counter) Output() fold.Output[S] {
	return fold.Output[S]{View: c.seen, Transitions: []fold.Transition[S]{{
		Key:    fmt.Sprintf("%s/%d", c.name, c.seen+1),
		Effect: effect.Succeed[S]([]facts.Draft(nil)),
	}}}
}
func (c *counter) SnapshotVersion() uint32 { return c.version }
func (c *counter) Snapshot() ([]byte, error) {
	var e fold.Encoder
	e.Uint(c.seen)
	return e.Data(), nil
}
func (c *counter) Restore(data []byte, prefix fold.Prefix) error {
	d := fold.NewDecoder(prefix.Thread(), data)
	c.seen, c.prefix = d.Uint(), prefix
	return d.Finish()
}

// all returns every cause the counter stands for: the prefix's, read
// again, then those it stepped.
func (c *counter) all() ([]string, error) {
	var out []string
	if c.prefix != nil {
		for f, err := range c.prefix.Read(1) {
			if err != nil {
				return nil, err
			}
			out = append(out, f.Cause)
		}
	}
	return append(out, c.causes...), nil
}

// logPrefix is the prefix of a log held in memory, and its cause index.
type logPrefix struct {
	log []facts.Fact
	n   int // the prefix is log[:n]
}

func (p logPrefix) Thread() string { return "t" }
func (p logPrefix) Seq() uint64    { return uint64(p.n) }
func (p logPrefix) Read(from uint64) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		for _, f := range p.log[max(from, 1)-1 : p.n] {
			if !yield(f, nil) {
				return
			}
		}
	}
}
func (p logPrefix) Cause(key string) (uint64, bool, error) {
	for _, f := range p.log { // the whole log: the index knows what came after too
		if f.Cause == key {
			return f.Seq, true, nil
		}
	}
	return 0, false, nil
}

func failed(t *testing.T, key string, defect bool) facts.Draft {
	d, err := facts.NewDraft(facts.KindTransitionFailed, key+"/failed/1", facts.TransitionFailed{Key: key, Message: "no " + key, Defect: defect})
	require.NoError(t, err)
	return d
}

// linked builds facts from drafts, linked as a store would.
func linked(ds ...facts.Draft) []facts.Fact {
	var out []facts.Fact
	var prev facts.Hash
	for i, d := range ds {
		f := facts.Fact{Thread: "t", Seq: uint64(i + 1), Kind: d.Kind, Cause: d.Cause, At: time.Unix(int64(i), 0).UTC(), Data: d.Data, Prev: prev}
		prev = f.Hash()
		out = append(out, f)
	}
	return out
}

func TestSnapshotRestore(t *testing.T) {
	var ds []facts.Draft
	for _, f := range chain(t, "ingress/start", "a/1", "b/1", "a/2") {
		ds = append(ds, facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data})
	}
	ds = append(ds, failed(t, "a/3", false))
	for _, f := range chain(t, "b/2", "ingress/more", "a/4") {
		ds = append(ds, facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data})
	}
	ds = append(ds, failed(t, "b/9", true))
	log := linked(ds...)
	fresh := func() []fold.Component[S] {
		return []fold.Component[S]{&counter{name: "a", version: 1}, fold.Prefixed[S]("p/", &counter{name: "b", version: 2})}
	}
	whole := fold.New(fresh()...)
	for _, f := range log {
		require.NoError(t, whole.Step(f))
	}
	wantSnap, err := whole.Snapshot()
	require.NoError(t, err)
	wantP, err := whole.Project()
	require.NoError(t, err)

	for n := 1; n <= len(log); n++ {
		part := fold.New(fresh()...)
		for _, f := range log[:n] {
			require.NoError(t, part.Step(f))
		}
		snap, err := part.Snapshot()
		require.NoError(t, err)
		p := logPrefix{log: log, n: n}
		restored, err := fold.Restore(fresh(), snap, log[n-1], p, p)
		require.NoError(t, err, "at %d", n)
		require.Equal(t, log[n-1].Hash(), restored.Hash())
		for _, f := range log[n:] {
			require.NoError(t, restored.Step(f))
		}
		got, err := restored.Snapshot()
		require.NoError(t, err)
		require.Equal(t, wantSnap, got, "restored at %d, then folded to the end: the same snapshot as the whole fold's", n)
		gotP, err := restored.Project()
		require.NoError(t, err)
		require.Equal(t, wantP.Stop, gotP.Stop)
		require.Equal(t, len(wantP.Enabled), len(gotP.Enabled))
		for _, key := range []string{"ingress/start", "a/2", "ingress/more", "a/4", "b/2", "a/9", "b/9/failed/1"} {
			ws, wok := whole.Used(key)
			gs, gok, err := restored.Cause(key)
			require.NoError(t, err)
			require.Equal(t, [2]any{ws, wok}, [2]any{gs, gok}, "key %s restored at %d", key, n)
		}
		for _, key := range []string{"a/3", "b/9", "a/1"} {
			wn, wl := whole.Failures(key)
			gn, gl := restored.Failures(key)
			require.Equal(t, [2]any{wn, wl}, [2]any{gn, gl}, "failures of %s restored at %d", key, n)
		}
		// A component reads what it stands for again through the prefix,
		// as it sees it.
		a := restored.Components()[0].(*counter)
		causes, err := a.all()
		require.NoError(t, err)
		require.Len(t, causes, len(log))
		b := restored.Components()[1].(interface{ Unwrap() fold.Component[S] }).Unwrap().(*counter)
		causes, err = b.all()
		require.NoError(t, err)
		require.Equal(t, []string{"ingress/start", "../a/1"}, causes[:2], "a prefixed component reads the prefix as it steps facts")
	}
	require.Equal(t, fold.StatusFailed, wantP.Stop.Status, "the defect stops the thread, restored or not")
}

// A snapshot of another version, or that does not fit, is refused.
func TestRestoreRefuses(t *testing.T) {
	log := chain(t, "ingress/start", "a/1", "a/2")
	f := fold.New[S](&counter{name: "a", version: 3})
	for _, fact := range log {
		require.NoError(t, f.Step(fact))
	}
	snap, err := f.Snapshot()
	require.NoError(t, err)
	p := logPrefix{log: log, n: 3}
	restore := func(data []byte, comps ...fold.Component[S]) error {
		_, err := fold.Restore(comps, data, log[2], p, p)
		return err
	}
	require.NoError(t, restore(snap, &counter{name: "a", version: 3}))

	older := append([]byte{fold.SnapshotFormat - 1}, snap[1:]...)
	require.ErrorIs(t, restore(older, &counter{name: "a", version: 3}), fold.ErrSnapshotVersion, "an older format")
	require.ErrorIs(t, restore(snap, &counter{name: "a", version: 4}), fold.ErrSnapshotVersion, "a component's newer version")
	require.ErrorIs(t, restore(snap, &counter{name: "z", version: 3}), fold.ErrBadSnapshot, "another component")
	require.ErrorIs(t, restore(snap, &counter{name: "a", version: 3}, &counter{name: "b", version: 3}), fold.ErrBadSnapshot, "more components")
	require.ErrorIs(t, restore(snap, &keys{name: "a"}), fold.ErrBadSnapshot, "a component that keeps none")
	for i := 1; i < len(snap); i++ {
		err := restore(snap[:i], &counter{name: "a", version: 3})
		require.ErrorIs(t, err, fold.ErrBadSnapshot, "cut at %d", i)
	}
	require.ErrorIs(t, restore(append(snap, 0), &counter{name: "a", version: 3}), fold.ErrBadSnapshot, "bytes after it")
	_, err = fold.Restore([]fold.Component[S]{&counter{name: "a", version: 3}}, snap, log[1], logPrefix{log: log, n: 2}, p)
	require.ErrorIs(t, err, fold.ErrBadSnapshot, "restored after another fact")

	var ran int
	withKeys := fold.New[S](&counter{name: "a", version: 3}, &keys{name: "k", ran: &ran})
	require.NoError(t, withKeys.Step(log[0]))
	_, err = withKeys.Snapshot()
	require.ErrorIs(t, err, fold.ErrNoSnapshot, "a fold with a component that keeps none keeps none")
	_, err = fold.New[S](&counter{name: "a"}).Snapshot()
	require.ErrorIs(t, err, fold.ErrNoSnapshot, "nothing folded")
}

// A cause index that fails fails the projection; it is not read as "not
// used".
func TestRestoredCauseIndexFails(t *testing.T) {
	log := chain(t, "ingress/start", "a/1")
	f := fold.New[S](&counter{name: "a", version: 1})
	for _, fact := range log {
		require.NoError(t, f.Step(fact))
	}
	snap, err := f.Snapshot()
	require.NoError(t, err)
	restored, err := fold.Restore([]fold.Component[S]{&counter{name: "a", version: 1}}, snap, log[1], logPrefix{log: log, n: 2}, failingIndex{})
	require.NoError(t, err)
	_, err = restored.Project()
	require.ErrorIs(t, err, errIndex)
	_, _, err = restored.Cause("a/1")
	require.ErrorIs(t, err, errIndex)
}

var errIndex = errors.New("index unavailable")

type failingIndex struct{}

func (failingIndex) Cause(string) (uint64, bool, error) { return 0, false, errIndex }
