package fold

import (
	"fmt"
	"iter"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
)

// Prefixed returns c with prefix before each key it enables, so that two
// instances of one component can share a log without enabling the same
// keys. The component sees the facts whose cause begins with its prefix as
// if unprefixed (a transition.failed naming one of its keys included),
// facts posted from outside as they are, and every other fact with "../"
// before its cause — so a component that tells its own facts by their
// causes, as the coding scheduler does, never takes another's for its own.
// Its claims are recorded under the prefix too.
func Prefixed[S any](prefix string, c Component[S]) Component[S] {
	return &prefixed[S]{prefix: prefix, inner: c}
}

type prefixed[S any] struct {
	prefix string
	inner  Component[S]
}

func (p *prefixed[S]) Name() string { return p.prefix + p.inner.Name() }

func (p *prefixed[S]) Step(f facts.Fact) error {
	f, err := p.local(f)
	if err != nil {
		return err
	}
	return p.inner.Step(f)
}

// local returns f as the inner component sees it.
func (p *prefixed[S]) local(f facts.Fact) (facts.Fact, error) {
	cause, own := strings.CutPrefix(f.Cause, p.prefix)
	if !own {
		if !facts.IsIngress(f.Cause) {
			f.Cause = "../" + f.Cause
		}
		return f, nil
	}
	f.Cause = cause
	if f.Kind == facts.KindTransitionFailed {
		tf, err := facts.Decode[facts.TransitionFailed](f)
		if err != nil {
			return f, err
		}
		if key, ok := strings.CutPrefix(tf.Key, p.prefix); ok {
			tf.Key = key
			d, err := facts.NewDraft(f.Kind, f.Cause, tf)
			if err != nil {
				return f, err
			}
			f.Data = d.Data
		}
	}
	return f, nil
}

// Unwrap returns the component with its keys unprefixed, for a reader
// that asks it what it knows.
func (p *prefixed[S]) Unwrap() Component[S] { return p.inner }

// Check passes the check on to the component, when it checks, with f as
// the component sees it.
func (p *prefixed[S]) Check(f facts.Fact) error {
	c, ok := p.inner.(Checker)
	if !ok {
		return nil
	}
	f, err := p.local(f)
	if err != nil {
		return err
	}
	return c.Check(f)
}

// CheckEnd passes the check on to the component, when it checks.
func (p *prefixed[S]) CheckEnd() error {
	if c, ok := p.inner.(Checker); ok {
		return c.CheckEnd()
	}
	return nil
}

func (p *prefixed[S]) Output() Output[S] {
	out := p.inner.Output()
	ts := make([]Transition[S], len(out.Transitions))
	for i, t := range out.Transitions {
		t.Key = p.prefix + t.Key
		if t.ClaimKey != "" {
			t.ClaimKey = p.prefix + t.ClaimKey
		}
		ts[i] = t
	}
	out.Transitions = ts
	return out
}

// Accept passes the check on to the component, when it checks.
func (p *prefixed[S]) Accept(d facts.Draft) error {
	if a, ok := p.inner.(Accepter); ok {
		return a.Accept(d)
	}
	return nil
}

// SnapshotVersion is the component's, when it keeps snapshots.
func (p *prefixed[S]) SnapshotVersion() uint32 {
	if s, ok := p.inner.(Snapshotter); ok {
		return s.SnapshotVersion()
	}
	return 0
}

// Snapshot is the component's, when it keeps snapshots; ErrNoSnapshot
// otherwise.
func (p *prefixed[S]) Snapshot() ([]byte, error) {
	s, ok := p.inner.(Snapshotter)
	if !ok {
		return nil, fmt.Errorf("%w: component %s keeps none", ErrNoSnapshot, p.inner.Name())
	}
	return s.Snapshot()
}

// Restore restores the component, which reads the prefix's facts as it
// sees them.
func (p *prefixed[S]) Restore(data []byte, prefix Prefix) error {
	s, ok := p.inner.(Snapshotter)
	if !ok {
		return fmt.Errorf("%w: component %s keeps none", ErrNoSnapshot, p.inner.Name())
	}
	return s.Restore(data, localPrefix[S]{p: p, inner: prefix})
}

// localPrefix is a prefix whose facts read as a prefixed component sees
// them.
type localPrefix[S any] struct {
	p     *prefixed[S]
	inner Prefix
}

func (l localPrefix[S]) Thread() string { return l.inner.Thread() }
func (l localPrefix[S]) Seq() uint64    { return l.inner.Seq() }

func (l localPrefix[S]) Read(from uint64) iter.Seq2[facts.Fact, error] {
	return l.p.localRead(l.inner.Read(from))
}

// localRead yields the facts of read as the component sees them.
func (p *prefixed[S]) localRead(read iter.Seq2[facts.Fact, error]) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		for f, err := range read {
			if err == nil {
				f, err = p.local(f)
			}
			if !yield(f, err) || err != nil {
				return
			}
		}
	}
}
