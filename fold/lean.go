package fold

import (
	"iter"

	"github.com/seed-7cc7a084/harness/facts"
)

// Source reads a thread's facts again: those with seqs from from on, in
// order, as thread.Store.Read does (an error is yielded once, and ends
// it). A reader may stop early.
type Source interface {
	Read(from uint64) iter.Seq2[facts.Fact, error]
}

// SourceFunc is a Source of a function.
type SourceFunc func(from uint64) iter.Seq2[facts.Fact, error]

// Read calls s.
func (s SourceFunc) Read(from uint64) iter.Seq2[facts.Fact, error] { return s(from) }

// Leaner is a component that can hold less of what it folded when it can
// read the facts again from a Source: what only a reading of the whole
// thread needs (a model turn's conversation, the records of calls long
// settled) it reads again, when asked, instead of keeping it. Its answers
// are the same either way. It is for a fold that never runs what it
// enables — a verifier's: a model turn it enables cannot run.
type Leaner interface {
	// Lean gives the component src, the facts it will step; given to a
	// component that already stepped facts, it does nothing.
	Lean(src Source)
}

// Lean gives src to every component that is a Leaner (see Leaner). Call
// it on a fresh fold, before the first Step, of a fold that never runs
// what it enables.
func (f *Fold[S]) Lean(src Source) {
	if f.seq != 0 {
		return
	}
	for _, c := range f.components {
		if l, ok := c.(Leaner); ok {
			l.Lean(src)
		}
	}
}

// Lean gives the component src as it sees the facts, when it is a Leaner.
func (p *prefixed[S]) Lean(src Source) {
	if l, ok := p.inner.(Leaner); ok {
		l.Lean(SourceFunc(func(from uint64) iter.Seq2[facts.Fact, error] {
			return p.localRead(src.Read(from))
		}))
	}
}
