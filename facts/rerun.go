package facts

import (
	"errors"
	"fmt"
)

// KindRerunTurn: how a model turn of a rerun compares with the same turn
// of the thread it reruns (RerunTurn). It is appended by the model turn's
// transition, with its model.turn, after it: it says which of the turn's
// calls are served from the original's log, or where and why the rerun
// diverged from it.
const KindRerunTurn Kind = "rerun.turn"

func init() {
	register[RerunTurn](KindRerunTurn)
}

// The reasons a rerun's turn diverges from the original's (see
// Divergence.Why).
const (
	// DivergedTool: a call names another tool than the original's call in
	// its place.
	DivergedTool = "tool"
	// DivergedArgs: a call names the same tool with other arguments (their
	// canonical JSON differs).
	DivergedArgs = "args"
	// DivergedExtraCall: the turn makes a call the original's turn did
	// not make (more calls, or calls where the original answered).
	DivergedExtraCall = "extra_call"
	// DivergedMissingCall: the turn makes fewer calls than the
	// original's, and calls none (an earlier stop) or stops short of them.
	DivergedMissingCall = "missing_call"
	// DivergedEarlierStop: the turn answers with no call where the
	// original's turn called tools.
	DivergedEarlierStop = "earlier_stop"
	// DivergedNoTurn: the original has no such turn (it ended, or stopped,
	// before it).
	DivergedNoTurn = "no_turn"
	// DivergedQuestion: one turn asks a person a question and the other
	// does not, or they ask different questions (another text, other
	// options). The same question is served the original's answer.
	DivergedQuestion = "question"
	// DivergedUnserved: the calls match, but the original holds no
	// completion to serve for one of them (it never completed, or its
	// effect was left open).
	DivergedUnserved = "unserved"
)

// Rerun is what a thread.forked of a rerun records: the thread is the
// thread From offered to another model (or prompt, or tools), from its
// first message.
type Rerun struct {
	// Model is the model spec the rerun runs on.
	Model string `msgpack:"model,omitempty" json:"model,omitempty"`
	// Key is the digest of the model spec and the overrides: a suite
	// reruns a thread once per key.
	Key string `msgpack:"key,omitempty" json:"key,omitempty"`
	// Overrides are the other changes the rerun makes, as "name=value"
	// (a system prompt, the tools offered), in order.
	Overrides []string `msgpack:"overrides,omitempty" json:"overrides,omitempty"`
	// Live is set when the rerun goes on, past a divergence, in a scratch
	// copy of the workspace.
	Live bool `msgpack:"live,omitempty" json:"live,omitempty"`
	// Scratch is, for a live rerun, the scratch copy it acts in: a rerun
	// cut off midway goes on there, and nowhere else ("" in a rerun
	// recorded before it was kept).
	Scratch string `msgpack:"scratch,omitempty" json:"scratch,omitempty"`
}

// Offer is a fact of the original that followed one of its model turns
// and came from outside — a person's next message (user.message), the
// answer to the turn's question (question.answered) — offered to the
// rerun after its same turn: a copy of it, naming Seq (see
// UserMessage.Served and QuestionAnswered.Served).
type Offer struct {
	Kind Kind   `msgpack:"kind,omitempty" json:"kind,omitempty"`
	Seq  uint64 `msgpack:"seq,omitempty" json:"seq,omitempty"`
}

// Validate requires a seq and one of the kinds offered.
func (o Offer) Validate() error {
	var err error
	if o.Seq == 0 {
		err = errors.New("missing seq")
	}
	if o.Kind != KindUserMessage && o.Kind != KindQuestionAnswered {
		err = errors.Join(err, fmt.Errorf("kind %q: only a %s or a %s is offered", o.Kind, KindUserMessage, KindQuestionAnswered))
	}
	return err
}

// Served names the recorded result a rerun serves for a call instead of
// running it: the original thread's action.completed at seq Seq.
type Served struct {
	Thread string `msgpack:"thread,omitempty" json:"thread,omitempty"`
	Seq    uint64 `msgpack:"seq,omitempty" json:"seq,omitempty"`
	// Check is the check the original's request declared, served with
	// it (its check.recorded at CheckSeq), if any.
	Check    *CheckSpec `msgpack:"check,omitempty" json:"check,omitempty"`
	CheckSeq uint64     `msgpack:"check_seq,omitempty" json:"check_seq,omitempty"`
	// Asked is set when the original's call was put to a person: the
	// approval the rerun would have needed, had it run the call.
	Asked bool `msgpack:"asked,omitempty" json:"asked,omitempty"`
	// Capability is what the original's request needed.
	Capability Capability `msgpack:"capability,omitempty" json:"capability,omitempty"`
}

// Validate requires the thread and the seq served from.
func (s Served) Validate() error {
	err := required("thread", s.Thread)
	if s.Seq == 0 {
		err = errors.Join(err, errors.New("missing seq"))
	}
	if s.CheckSeq != 0 && s.Check == nil {
		err = errors.Join(err, errors.New("a check seq with no check"))
	}
	return err
}

// Divergence is where and why a rerun's turn differs from the
// original's.
type Divergence struct {
	// Why is one of the Diverged reasons.
	Why string `msgpack:"why,omitempty" json:"why,omitempty"`
	// Call is the index, from 0, of the first call that differs.
	Call int `msgpack:"call,omitempty" json:"call,omitempty"`
	// Original and Rerun are the calls in that place, when there are.
	Original *ToolCall `msgpack:"original,omitempty" json:"original,omitempty"`
	Rerun    *ToolCall `msgpack:"rerun,omitempty" json:"rerun,omitempty"`
	// Detail says it in a sentence.
	Detail string `msgpack:"detail,omitempty" json:"detail,omitempty"`
}

// RerunTurn is the payload of rerun.turn.
type RerunTurn struct {
	// Turn is the model turn compared.
	Turn int `msgpack:"turn,omitempty" json:"turn,omitempty"`
	// From is the thread rerun; OriginalSeq the seq of its model.turn
	// compared (0 when it has no such turn).
	From        string `msgpack:"from,omitempty" json:"from,omitempty"`
	OriginalSeq uint64 `msgpack:"original_seq,omitempty" json:"original_seq,omitempty"`
	// Served are the recorded results of the turn's calls, one per call
	// in order, when the turn matched; none when it diverged.
	Served []Served `msgpack:"served,omitempty" json:"served,omitempty"`
	// Diverged says where and why, when the turn did not match.
	Diverged *Divergence `msgpack:"diverged,omitempty" json:"diverged,omitempty"`
	// Stop is set when the rerun stops here: it diverged, and the rerun
	// does not go on live.
	Stop bool `msgpack:"stop,omitempty" json:"stop,omitempty"`
	// Offers are, when the turn matched, what came from outside after the
	// original's same turn and before its next one, in the original's
	// order: the rerun is offered each (a copy naming its seq) once the
	// turn's served results are in — the answer to the turn's question in
	// place of waiting for a person, a message before its next turn.
	Offers []Offer `msgpack:"offers,omitempty" json:"offers,omitempty"`
}

// Validate requires a turn and the thread rerun; a divergence with a
// reason, and served results with none.
func (p RerunTurn) Validate() error {
	err := required("from", p.From)
	if p.Turn < 1 {
		err = errors.Join(err, errors.New("missing turn"))
	}
	if p.Diverged != nil {
		err = errors.Join(err, required("diverged.why", p.Diverged.Why))
		if len(p.Served) > 0 {
			err = errors.Join(err, errors.New("served results on a turn that diverged"))
		}
	}
	if p.Stop && p.Diverged == nil {
		err = errors.Join(err, errors.New("a stop with no divergence"))
	}
	if p.Diverged != nil && len(p.Offers) > 0 {
		err = errors.Join(err, errors.New("offers on a turn that diverged"))
	}
	for i, o := range p.Offers {
		if e := o.Validate(); e != nil {
			err = errors.Join(err, fmt.Errorf("offer %d: %w", i+1, e))
		}
	}
	for i, s := range p.Served {
		if e := s.Validate(); e != nil {
			err = errors.Join(err, fmt.Errorf("served %d: %w", i+1, e))
		}
	}
	return err
}
