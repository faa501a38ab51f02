package fold_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

type S = struct{}

// keys is a component that enables fixed keys, counting the facts it saw.
type keys struct {
	name string
	keys []string
	seen int
	ran  *int
}

func (k *keys) Name() string          { return k.name }
func (k *keys) Step(facts.Fact) error { k.seen++; return nil }
func (k *keys) Output() fold.Output[S] {
	var out fold.Output[S]
	for _, key := range k.keys {
		out.Transitions = append(out.Transitions, fold.Transition[S]{Key: key, Effect: effect.FromAsync(func(context.Context, S) ([]facts.Draft, error) {
			*k.ran++
			return nil, nil
		})})
	}
	return out
}

// chain builds facts with the given causes, linked as a store would.
func chain(t *testing.T, causes ...string) []facts.Fact {
	t.Helper()
	var out []facts.Fact
	var prev facts.Hash
	for i, c := range causes {
		d, err := facts.NewDraft(facts.KindUserMessage, c, facts.UserMessage{Text: c})
		require.NoError(t, err)
		f := facts.Fact{Thread: "t", Seq: uint64(i + 1), Kind: d.Kind, Cause: d.Cause, At: time.Unix(int64(i), 0).UTC(), Data: d.Data, Prev: prev}
		prev = f.Hash()
		out = append(out, f)
	}
	return out
}

func TestProjection(t *testing.T) {
	var ran int
	a := &keys{name: "a", keys: []string{"a/2", "a/1"}, ran: &ran}
	b := &keys{name: "b", keys: []string{"b/1", "shared"}, ran: &ran}
	f := fold.New[S](a, b)
	for _, fact := range chain(t, "ingress/start", "a/2") {
		require.NoError(t, f.Step(fact))
	}
	require.Equal(t, 2, a.seen, "every component sees every fact")
	require.EqualValues(t, 2, f.Seq())

	p, err := f.Project()
	require.NoError(t, err)
	var got []string
	for _, e := range p.Enabled {
		got = append(got, e.Component+":"+e.Key)
	}
	require.Equal(t, []string{"a:a/1", "b:b/1", "b:shared"}, got, "components in order, each in its own order, minus used keys")
	seq, used := f.Used("a/2")
	require.True(t, used)
	require.EqualValues(t, 2, seq)

	// The same log projects the same transitions.
	again := fold.New[S](&keys{name: "a", keys: a.keys, ran: &ran}, &keys{name: "b", keys: b.keys, ran: &ran})
	for _, fact := range chain(t, "ingress/start", "a/2") {
		require.NoError(t, again.Step(fact))
	}
	p2, err := again.Project()
	require.NoError(t, err)
	require.Len(t, p2.Enabled, len(p.Enabled))
	for i := range p.Enabled {
		require.Equal(t, p.Enabled[i].Key, p2.Enabled[i].Key)
	}
	require.Zero(t, ran, "projecting runs nothing")
}

func TestDuplicateTransition(t *testing.T) {
	var ran int
	f := fold.New[S](&keys{name: "first", keys: []string{"x"}, ran: &ran}, &keys{name: "second", keys: []string{"x"}, ran: &ran})
	_, err := f.Project()
	require.ErrorIs(t, err, fold.ErrDuplicateTransition)
	var dup *fold.DuplicateTransitionError
	require.ErrorAs(t, err, &dup)
	require.Equal(t, fold.DuplicateTransitionError{Key: "x", First: "first", Second: "second"}, *dup)
	require.Zero(t, ran, "reported before any effect body runs")

	// Even when the key is already used: two owners is a bug either way.
	for _, fact := range chain(t, "x") {
		require.NoError(t, f.Step(fact))
	}
	_, err = f.Project()
	require.ErrorIs(t, err, fold.ErrDuplicateTransition)
}

func TestStepRefusesFactsOutOfOrder(t *testing.T) {
	facts3 := chain(t, "a", "b", "c")
	cases := map[string][]int{
		"gap":       {0, 2},
		"repeat":    {0, 0},
		"not first": {1},
	}
	for name, order := range cases {
		t.Run(name, func(t *testing.T) {
			f := fold.New[S]()
			var err error
			for _, i := range order {
				if err = f.Step(facts3[i]); err != nil {
					break
				}
			}
			require.ErrorIs(t, err, fold.ErrOutOfOrder)
		})
	}
	t.Run("the hash is the last fact's", func(t *testing.T) {
		f := fold.New[S]()
		require.True(t, f.Hash().IsZero())
		require.NoError(t, f.Step(facts3[0]))
		require.Equal(t, facts3[0].Hash(), f.Hash())
		require.Equal(t, facts3[1].Prev, f.Hash())
	})
}

func TestADefectStopsTheThread(t *testing.T) {
	var ran int
	f := fold.New[S](&keys{name: "a", keys: []string{"next"}, ran: &ran})
	d, err := facts.NewDraft(facts.KindTransitionFailed, "boom/failed/1", facts.TransitionFailed{Key: "boom", Defect: true, Message: "panic: nil map"})
	require.NoError(t, err)
	require.NoError(t, f.Step(facts.Fact{Thread: "t", Seq: 1, Kind: d.Kind, Cause: d.Cause, Data: d.Data}))
	p, err := f.Project()
	require.NoError(t, err)
	require.Empty(t, p.Enabled)
	require.NotNil(t, p.Stop)
	require.Equal(t, fold.StatusFailed, p.Stop.Status)
	require.Contains(t, p.Stop.Reason, "panic: nil map")
}

// picky refuses every posted fact.
type picky struct{ keys }

func (picky) Accept(d facts.Draft) error { return errors.New("not now") }

func TestAccept(t *testing.T) {
	var ran int
	f := fold.New[S](&keys{name: "lenient", ran: &ran}, &picky{keys{name: "picky", ran: &ran}})
	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/k", facts.UserMessage{Text: "hi"})
	require.NoError(t, err)
	err = f.Accept(d)
	require.ErrorIs(t, err, fold.ErrRefused)
	require.ErrorContains(t, err, "not now")
	require.NoError(t, fold.New[S](&keys{name: "lenient", ran: &ran}).Accept(d))
}

// failures records the keys of the transition.failed facts it sees.
type failures struct {
	keys
	failed []string
}

func (f *failures) Step(fact facts.Fact) error {
	if fact.Kind == facts.KindTransitionFailed {
		tf, err := facts.Decode[facts.TransitionFailed](fact)
		if err != nil {
			return err
		}
		f.failed = append(f.failed, tf.Key)
	}
	return nil
}

func TestPrefixed(t *testing.T) {
	var ran int
	inner := &failures{keys: keys{name: "sched", keys: []string{"infer/turn/1"}, ran: &ran}}
	c := fold.Prefixed[S]("infer2/", inner)
	require.Equal(t, "infer2/sched", c.Name())
	out := c.Output()
	require.Equal(t, "infer2/infer/turn/1", out.Transitions[0].Key)

	d, err := facts.NewDraft(facts.KindTransitionFailed, "infer2/infer/turn/1/failed/1", facts.TransitionFailed{Key: "infer2/infer/turn/1", Class: facts.ClassTransient, Message: "429"})
	require.NoError(t, err)
	require.NoError(t, c.Step(facts.Fact{Thread: "t", Seq: 1, Kind: d.Kind, Cause: d.Cause, Data: d.Data}))
	require.Equal(t, []string{"infer/turn/1"}, inner.failed, "the component sees its own key")
}

// A cause's first use is where it is recorded, whether its facts are
// consecutive (one append) or not, and whatever room was reserved.
func TestUsedRecordsTheFirstUse(t *testing.T) {
	log := chain(t, "ingress/start", "a/1", "a/1", "b/1", "a/1", "ingress/start")
	for _, reserve := range []int{0, 1, 100} {
		var ran int
		f := fold.New[S](&keys{name: "a", keys: []string{"a/1", "a/2"}, ran: &ran})
		f.Reserve(reserve)
		for _, fact := range log {
			require.NoError(t, f.Step(fact))
		}
		f.Reserve(1000) // after a Step: nothing changes
		for cause, first := range map[string]uint64{"ingress/start": 1, "a/1": 2, "b/1": 4} {
			seq, used := f.Used(cause)
			require.True(t, used, cause)
			require.Equal(t, first, seq, cause)
		}
		_, used := f.Used("a/2")
		require.False(t, used)
		p, err := f.Project()
		require.NoError(t, err)
		require.Len(t, p.Enabled, 1)
		require.Equal(t, "a/2", p.Enabled[0].Key)
	}
}
