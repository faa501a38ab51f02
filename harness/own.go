package harness

import (
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// What a thread records of itself beside its turns — its title, the
// workspace it works in, its approval policy, the answers posted to it —
// is read by the lineage component, fact by fact as the thread's other
// parts are, and kept in its snapshot: a reader asks the thread's View
// (View.Own), never the log. A thread restored from its snapshot answers
// them without reading one fact more than its Resume does.

// answerKinds are the kinds posted as a person's answer whose latest fact
// Own keeps (see Own.LastAnswer).
var answerKinds = [...]facts.Kind{facts.KindConfirmationAnswered, facts.KindQuestionAnswered, facts.KindEffectReconciled, facts.KindUserMessage}

// Own is what a thread records of itself, as its view reads it: the facts
// that say it, kept as they are, decoded when asked (a fact that does not
// decode is the error of the question that reads it, as it was of a scan
// of the log).
type Own struct {
	// first is the thread's first fact when it is its task (a
	// user.message) or its spawn record.
	first *facts.Fact
	// system is the thread's first system.configured.
	system *facts.Fact
	// policy is the thread's latest policy.set.
	policy *facts.Fact
	// answers are the latest fact of each of answerKinds, in that order.
	answers [len(answerKinds)]*facts.Fact
	// posted is the seq of the latest fact posted from outside (an
	// ingress cause), and postedKind its kind.
	posted     uint64
	postedKind facts.Kind
}

// own is the lineage component's fold of Own.
type own struct{ Own }

func (o *own) step(f facts.Fact) {
	switch {
	case f.Seq == 1 && (f.Kind == facts.KindUserMessage || f.Kind == facts.KindThreadSpawned):
		o.first = &f
	case f.Kind == facts.KindSystemConfigured && o.system == nil:
		o.system = &f
	case f.Kind == facts.KindPolicySet:
		o.policy = &f
	}
	for i, k := range answerKinds {
		if f.Kind == k {
			o.answers[i] = &f
		}
	}
	if facts.IsIngress(f.Cause) {
		o.posted, o.postedKind = f.Seq, f.Kind
	}
}

// Title is the message that started the thread: a child's task, or its
// first fact's text when that is a user.message; "" otherwise.
func (o Own) Title() (string, error) {
	if o.first == nil {
		return "", nil
	}
	f := *o.first
	if f.Kind == facts.KindThreadSpawned {
		sp, err := facts.Decode[facts.ThreadSpawned](f)
		if err != nil {
			return "", fmt.Errorf("thread %s at seq %d: %w", f.Thread, f.Seq, err)
		}
		return sp.Task, nil
	}
	m, err := facts.Decode[facts.UserMessage](f)
	if err != nil {
		return "", fmt.Errorf("thread %s at seq %d: %w", f.Thread, f.Seq, err)
	}
	return m.Text, nil
}

// Workspace is the workspace the thread recorded on its first
// system.configured (see Config.Workspace); "" when it records none.
func (o Own) Workspace() (string, error) {
	if o.system == nil {
		return "", nil
	}
	sys, err := facts.Decode[facts.SystemConfigured](*o.system)
	if err != nil {
		return "", fmt.Errorf("thread %s at seq %d: %w", o.system.Thread, o.system.Seq, err)
	}
	return sys.Workspace, nil
}

// Policy is the thread's latest policy.set and its seq; ok is false when
// the thread records none.
func (o Own) Policy() (p facts.PolicySet, seq uint64, ok bool, err error) {
	if o.policy == nil {
		return facts.PolicySet{}, 0, false, nil
	}
	p, err = facts.Decode[facts.PolicySet](*o.policy)
	if err != nil {
		return facts.PolicySet{}, 0, false, fmt.Errorf("the policy of %s at seq %d: %w", o.policy.Thread, o.policy.Seq, err)
	}
	return p, o.policy.Seq, true, nil
}

// LastAnswer is the thread's last fact of kind — an answer: a
// confirmation's, a question's, a reconciliation, or a user.message —
// provided nothing else was posted after it (facts the runtime appended
// since do not count). ok is false when there is none, and for any other
// kind.
func (o Own) LastAnswer(kind facts.Kind) (facts.Fact, bool) {
	for i, k := range answerKinds {
		if k != kind || o.answers[i] == nil {
			continue
		}
		f := *o.answers[i]
		// Something of another kind posted after it hides it.
		if o.posted > f.Seq && o.postedKind != kind {
			return facts.Fact{}, false
		}
		return f, true
	}
	return facts.Fact{}, false
}

// snapshot writes Own: each fact as a flag and, when set, the fact — the
// first, the system configuration, the policy, the answers in the order
// of answerKinds — then the seq of the latest post and its kind.
func (o *own) snapshot(e *fold.Encoder) error {
	put := func(f *facts.Fact) error {
		e.Bool(f != nil)
		if f == nil {
			return nil
		}
		return e.Fact(*f)
	}
	for _, f := range append([]*facts.Fact{o.first, o.system, o.policy}, o.answers[:]...) {
		if err := put(f); err != nil {
			return fmt.Errorf("lineage: %w", err)
		}
	}
	e.Uint(o.posted)
	e.String(string(o.postedKind))
	return nil
}

// restore reads what snapshot wrote, of a thread whose last fact folded
// is at seq.
func (o *own) restore(d *fold.Decoder, seq uint64) error {
	get := func(want facts.Kind) (*facts.Fact, error) {
		if !d.Bool() {
			return nil, nil
		}
		f := d.Fact()
		switch {
		case d.Err() != nil:
			return nil, d.Err()
		case f.Seq == 0 || f.Seq > seq:
			return nil, fmt.Errorf("lineage: a snapshot's fact at seq %d, past its seq %d", f.Seq, seq)
		case want != "" && f.Kind != want:
			return nil, fmt.Errorf("lineage: a snapshot's fact at seq %d is a %s, not a %s", f.Seq, f.Kind, want)
		}
		return &f, nil
	}
	var err error
	if o.first, err = get(""); err != nil {
		return err
	}
	if o.first != nil && (o.first.Seq != 1 || (o.first.Kind != facts.KindUserMessage && o.first.Kind != facts.KindThreadSpawned)) {
		return fmt.Errorf("lineage: a snapshot's first fact is a %s at seq %d", o.first.Kind, o.first.Seq)
	}
	if o.system, err = get(facts.KindSystemConfigured); err != nil {
		return err
	}
	if o.policy, err = get(facts.KindPolicySet); err != nil {
		return err
	}
	for i, k := range answerKinds {
		if o.answers[i], err = get(k); err != nil {
			return err
		}
	}
	o.posted, o.postedKind = d.Uint(), facts.Kind(d.String())
	if o.posted > seq {
		return fmt.Errorf("lineage: a snapshot's latest post at seq %d, past its seq %d", o.posted, seq)
	}
	return nil
}

// check reads the log's fact at the seq of the policy a restored snapshot
// names: the policy widens or narrows what runs unasked, so a snapshot
// stands for it only when it is the log's fact at that seq, hash for
// hash. It costs one read.
func (o *own) check(p fold.Prefix) error {
	if o.policy == nil {
		return nil
	}
	for f, err := range p.Read(o.policy.Seq) {
		if err != nil {
			return fmt.Errorf("lineage: read the policy at seq %d: %w", o.policy.Seq, err)
		}
		if f.Seq != o.policy.Seq || f.Hash() != o.policy.Hash() {
			return fmt.Errorf("lineage: a snapshot's policy at seq %d is not the log's fact there", o.policy.Seq)
		}
		return nil
	}
	return fmt.Errorf("lineage: a snapshot's policy at seq %d is not in the log", o.policy.Seq)
}
