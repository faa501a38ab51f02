package fold_test

import (
	"fmt"
	"iter"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// tally counts the messages of a thread, and keeps the count in its
// snapshots.
type tally struct{ n uint64 }

func (t *tally) Name() string { return "tally" }
func (t *tally) Step(f facts.Fact) error {
	if f.Kind == facts.KindUserMessage {
		t.n++
	}
	return nil
}
func (t *tally) Output() fold.Output[struct{}] { return fold.Output[struct{}]{View: t.n} }

func (t *tally) SnapshotVersion() uint32 { return 1 }
func (t *tally) Snapshot() ([]byte, error) {
	var e fold.Encoder
	e.Uint(t.n)
	return e.Data(), nil
}
func (t *tally) Restore(data []byte, p fold.Prefix) error {
	d := fold.NewDecoder(p.Thread(), data)
	t.n = d.Uint()
	return d.Finish()
}

// memLog is a log held in memory: the prefix of a snapshot, and the cause
// index of its facts.
type memLog []facts.Fact

func (l memLog) Thread() string { return "t" }
func (l memLog) Seq() uint64    { return uint64(len(l)) }
func (l memLog) Read(from uint64) iter.Seq2[facts.Fact, error] {
	return func(yield func(facts.Fact, error) bool) {
		for _, f := range l[max(from, 1)-1:] {
			if !yield(f, nil) {
				return
			}
		}
	}
}
func (l memLog) Cause(key string) (uint64, bool, error) {
	for _, f := range l {
		if f.Cause == key {
			return f.Seq, true, nil
		}
	}
	return 0, false, nil
}

// A fold kept as a snapshot after three facts, and restored: the restored
// fold steps only the fourth, and knows the causes before it.
func ExampleRestore() {
	var log memLog
	for i, cause := range []string{"ingress/start", "ingress/a", "ingress/b", "ingress/c"} {
		d, _ := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: "hi"})
		log = append(log, facts.Fact{Thread: "t", Seq: uint64(i + 1), Kind: d.Kind, Cause: d.Cause, Data: d.Data})
	}
	first := fold.New[struct{}](&tally{})
	for _, f := range log[:3] {
		_ = first.Step(f)
	}
	snap, err := first.Snapshot()
	if err != nil {
		panic(err)
	}

	later, err := fold.Restore([]fold.Component[struct{}]{&tally{}}, snap, log[2], log[:3], log[:3])
	if err != nil {
		panic(err)
	}
	_ = later.Step(log[3])
	_, used := later.Used("ingress/a")
	fmt.Println(later.Components()[0].Output().View, later.Seq(), used)
	// Output: 4 4 true
}
