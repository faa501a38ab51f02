package rerun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// Recording is a thread's record as a rerun reads it: its model turns,
// each with its calls and their recorded results.
type Recording struct {
	Thread string
	// First is the seq of its first user message: a rerun forks there.
	First uint64
	// Head is the seq of its last fact.
	Head  uint64
	Turns []Turn
	// Rerun is what its thread.forked records, when it is a rerun itself.
	Rerun *facts.Rerun
	// From is the thread it reruns, when it is a rerun.
	From string
	// System is its first system.configured after its fork, or else its
	// first, when it has one; SystemSeq its seq, Forked the seq of its
	// thread.forked of a rerun.
	System    *facts.SystemConfigured
	SystemSeq uint64
	Forked    uint64
	// Before are the seqs of its user messages after the first and
	// before its first model turn.
	Before []uint64
	// Instructions are its instructions.read facts, each with the turn
	// it was read for, in order.
	Instructions []instructionsAt
}

// Turn is one model turn of a recording.
type Turn struct {
	N   int
	Seq uint64
	facts.ModelTurn
	Calls []Call
	// Compared is the turn's rerun.turn, when the thread is a rerun.
	Compared *facts.RerunTurn
	// Offers are what came from outside after the turn and before the
	// next: the answer to its question, a person's messages, in order;
	// Said what each said (in a rerun, also the copies it was offered).
	Offers []facts.Offer
	Said   []string
}

// Call is a tool call of a turn and what became of it.
type Call struct {
	facts.ToolCall
	// Digest is the call's digest over its canonical arguments (see
	// CallDigest).
	Digest string
	// Requested is the latest attempt's request; CompletedSeq and
	// Completed its completion, when there is one; CheckSeq and Check its
	// check.
	Requested    *facts.ActionRequested
	CompletedSeq uint64
	Completed    *facts.ActionCompleted
	CheckSeq     uint64
	Check        *facts.CheckRecorded
	// Asked is set when the call was put to a person; Answer is what
	// they said.
	Asked  bool
	Answer *facts.ConfirmationAnswered
}

// CallDigest is a call's digest as a rerun compares calls: the tool and
// its arguments as canonical JSON (keys sorted, no spaces), so that the
// same value spelled otherwise is the same call. Arguments that are not
// one JSON value are compared as written.
func CallDigest(tool, args string) string {
	return facts.CallDigest(tool, Canonical(args))
}

// Canonical is arguments as canonical JSON, or as written when they are
// not one JSON value — or name a key twice: such arguments are refused by
// the runtime (facts.CheckJSON), and must not match the arguments their
// last value spells.
func Canonical(args string) string {
	if facts.CheckJSON([]byte(args)) != nil {
		return args
	}
	d := json.NewDecoder(strings.NewReader(args))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil || d.More() {
		return args
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return args
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Read reads thread id's recording from store.
func Read(ctx context.Context, store thread.Store, id string) (*Recording, error) {
	r := &Recording{Thread: id}
	type at struct{ turn, call int }
	refs := map[string]at{}
	attempt := map[string]string{} // call ref → latest attempt's action id
	for f, err := range store.Read(ctx, id, 1) {
		if errors.Is(err, thread.ErrNotFound) {
			return nil, fmt.Errorf("read %s: %w", id, harness.ErrUnknownThread)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", id, err)
		}
		r.Head = f.Seq
		switch f.Kind {
		case facts.KindUserMessage:
			switch {
			case r.First == 0:
				r.First = f.Seq
			case len(r.Turns) == 0:
				r.Before = append(r.Before, f.Seq)
			default:
				p, err := facts.Decode[facts.UserMessage](f)
				if err != nil {
					return nil, err
				}
				t := &r.Turns[len(r.Turns)-1]
				t.Offers = append(t.Offers, facts.Offer{Kind: f.Kind, Seq: f.Seq})
				t.Said = append(t.Said, said("message", p.Text, p.Served))
			}
		case facts.KindQuestionAnswered:
			p, err := facts.Decode[facts.QuestionAnswered](f)
			if err != nil {
				return nil, err
			}
			if n := len(r.Turns); n > 0 && r.Turns[n-1].Question != nil && p.RequestID == "q-"+strconv.Itoa(r.Turns[n-1].N) {
				t := &r.Turns[n-1]
				t.Offers = append(t.Offers, facts.Offer{Kind: f.Kind, Seq: f.Seq})
				t.Said = append(t.Said, said("answer", p.Text, p.Served))
			}
		case facts.KindSystemConfigured:
			if r.System == nil || r.SystemSeq < r.Forked {
				p, err := facts.Decode[facts.SystemConfigured](f)
				if err != nil {
					return nil, err
				}
				r.System, r.SystemSeq = &p, f.Seq
			}
		case facts.KindThreadForked:
			p, err := facts.Decode[facts.ThreadForked](f)
			if err != nil {
				return nil, err
			}
			if p.Rerun != nil && r.Rerun == nil {
				r.Rerun, r.From, r.Forked = p.Rerun, p.From, f.Seq
			}
		case facts.KindInstructionsRead:
			if !strings.HasPrefix(f.Cause, "infer/turn/") {
				continue // a nested scheduler's
			}
			p, err := facts.Decode[facts.InstructionsRead](f)
			if err != nil {
				return nil, err
			}
			r.Instructions = append(r.Instructions, instructionsAt{turn: p.Turn, read: p})
		case facts.KindModelTurn:
			if !strings.HasPrefix(f.Cause, "infer/turn/") {
				continue // a nested scheduler's
			}
			p, err := facts.Decode[facts.ModelTurn](f)
			if err != nil {
				return nil, err
			}
			t := Turn{N: p.Turn, Seq: f.Seq, ModelTurn: p}
			for i, tc := range p.ToolCalls {
				t.Calls = append(t.Calls, Call{ToolCall: tc, Digest: CallDigest(tc.Name, tc.Args)})
				refs[strconv.Itoa(p.Turn)+"-"+tc.ID] = at{len(r.Turns), i}
			}
			r.Turns = append(r.Turns, t)
		case facts.KindRerunTurn:
			p, err := facts.Decode[facts.RerunTurn](f)
			if err != nil {
				return nil, err
			}
			if n := len(r.Turns); n > 0 && r.Turns[n-1].N == p.Turn {
				r.Turns[n-1].Compared = &p
			}
		case facts.KindConfirmationRequested:
			p, err := facts.Decode[facts.ConfirmationRequested](f)
			if err != nil {
				return nil, err
			}
			if a, ok := refs[p.CallID]; ok {
				r.Turns[a.turn].Calls[a.call].Asked = true
			}
		case facts.KindConfirmationAnswered:
			p, err := facts.Decode[facts.ConfirmationAnswered](f)
			if err != nil {
				return nil, err
			}
			if a, ok := refs[p.RequestID]; ok {
				r.Turns[a.turn].Calls[a.call].Answer = &p
			}
		case facts.KindActionRequested:
			p, err := facts.Decode[facts.ActionRequested](f)
			if err != nil {
				return nil, err
			}
			ref, _, _ := strings.Cut(p.ActionID, ".")
			if a, ok := refs[ref]; ok {
				c := &r.Turns[a.turn].Calls[a.call]
				c.Requested, c.Completed, c.CompletedSeq, c.Check, c.CheckSeq = &p, nil, 0, nil, 0
				attempt[ref] = p.ActionID
				if p.Served != nil {
					c.Asked = c.Asked || p.Served.Asked
				}
			}
		case facts.KindActionCompleted:
			p, err := facts.Decode[facts.ActionCompleted](f)
			if err != nil {
				return nil, err
			}
			ref, _, _ := strings.Cut(p.ActionID, ".")
			if a, ok := refs[ref]; ok && attempt[ref] == p.ActionID {
				c := &r.Turns[a.turn].Calls[a.call]
				c.Completed, c.CompletedSeq = &p, f.Seq
			}
		case facts.KindCheckRecorded:
			p, err := facts.Decode[facts.CheckRecorded](f)
			if err != nil {
				return nil, err
			}
			ref, _, _ := strings.Cut(p.ActionID, ".")
			if a, ok := refs[ref]; ok && attempt[ref] == p.ActionID {
				c := &r.Turns[a.turn].Calls[a.call]
				c.Check, c.CheckSeq = &p, f.Seq
			}
		}
	}
	if r.Head == 0 {
		return nil, fmt.Errorf("read %s: %w", id, harness.ErrUnknownThread)
	}
	return r, nil
}

// turn is the recording's turn n, or nil.
func (r *Recording) turn(n int) *Turn {
	for i := range r.Turns {
		if r.Turns[i].N == n {
			return &r.Turns[i]
		}
	}
	return nil
}

// said says what a message or answer said, and where a copy came from.
func said(what, text string, from *facts.Served) string {
	s := what + ": " + strconv.Quote(clip(text))
	if from != nil {
		s += fmt.Sprintf(" (served from %s seq %d)", from.Thread, from.Seq)
	}
	return s
}
