package stock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/tools"
)

// Step is one step of a thread read whole, as show gives it: an action
// (its request, sandbox, report, output, observation with diffs, check),
// a model turn with the request and response bytes kept, the instruction
// files a turn was given with their text, or any other fact.
type Step struct {
	// Thread is the thread the step is of (a child, for CHILD/STEP).
	Thread string
	// Fact is the fact at the seq named; for an action named by its id,
	// the zero fact.
	Fact facts.Fact
	// Action is set for a step of an action: the action, its call and
	// its document (drive.DescribeAction).
	Action *StepAction
	// Turn is set for a model turn, with the kept bytes of its exchange
	// (or why they cannot be read).
	Turn                    *facts.ModelTurn
	Request, Response       []byte
	RequestErr, ResponseErr error
	// Instructions is set for an instructions.read fact, and Texts holds
	// each file's text kept (or Notes why not), by index.
	Instructions *facts.InstructionsRead
	Texts, Notes []string
	// CommandTimeout is the workspace's default command timeout, said
	// beside a command.
	CommandTimeout int64
}

// StepAction is an action of a step.
type StepAction struct {
	Action scheduler.Action
	Call   scheduler.Call
	Doc    drive.ActionDoc
}

// Step reads the step what of the thread id: a seq, an action id, or
// CHILD/STEP for a step of a thread of id's tree (CHILD is id.<...>). A
// seq of an action's fact is that action. A what that names nothing is
// ErrNoStep.
func (s *Session) Step(ctx context.Context, id, what string) (Step, error) {
	if child, step, ok := strings.Cut(what, "/"); ok {
		if !strings.HasPrefix(child, id+".") {
			return Step{}, &stepError{msg: fmt.Sprintf("%s is not a thread of %s's tree (a child of %s is named %s.<turn>-<call>)", present.EscapeLine(child), id, id, id)}
		}
		id, what = child, step
	}
	rt, _, err := s.Runtime()
	if err != nil {
		return Step{}, err
	}
	r, err := rt.Thread(s.Stock.Actor, id).Reading(ctx)
	if err != nil {
		return Step{}, err
	}
	st := Step{Thread: id, CommandTimeout: int64(s.Stock.Tools.Limits().CommandTimeout)}
	seq, serr := strconv.ParseUint(what, 10, 64)
	if serr != nil {
		act, ok := drive.FindAction(r, what)
		if !ok {
			return st, &stepError{msg: fmt.Sprintf("thread %s has no action %q nor seq", id, present.EscapeLine(what)), action: true}
		}
		s.stepAction(ctx, &st, r, act)
		return st, nil
	}
	f, err := thread.ReadAt(ctx, s.Store, id, seq)
	if errors.Is(err, thread.ErrNoSeq) {
		head, _ := s.Store.Head(ctx, id)
		return st, &stepError{msg: fmt.Sprintf("thread %s has no seq %d (it has facts 1 to %d)", id, seq, head.Seq)}
	} else if err != nil {
		return st, errors.Unwrap(err) // the store's error names thread and seq
	}
	st.Fact = f
	if act, ok := drive.ActionAt(r, seq); ok {
		s.stepAction(ctx, &st, r, act)
		return st, nil
	}
	switch f.Kind {
	case facts.KindModelTurn:
		mt, err := facts.Decode[facts.ModelTurn](f)
		if err != nil {
			return st, fmt.Errorf("thread %s at seq %d: %w", id, f.Seq, err)
		}
		st.Turn = &mt
		if x := mt.Exchange; x != nil {
			st.Request, st.RequestErr = s.kept(ctx, x.Request)
			st.Response, st.ResponseErr = s.kept(ctx, x.Response)
		}
	case facts.KindInstructionsRead:
		p, err := facts.Decode[facts.InstructionsRead](f)
		if err != nil {
			return st, fmt.Errorf("thread %s at seq %d: %w", id, f.Seq, err)
		}
		st.Instructions = &p
		st.Texts, st.Notes = make([]string, len(p.Files)), make([]string, len(p.Files))
		for i, fl := range p.Files {
			if fl.Skipped != "" {
				continue
			}
			if b, err := s.kept(ctx, fl.Digest); err != nil {
				st.Notes[i] = err.Error()
			} else {
				st.Texts[i] = string(b)
			}
		}
	}
	return st, nil
}

// stepAction sets the step's action: act whole, with the previews and
// diffs of the contents the store kept.
func (s *Session) stepAction(ctx context.Context, st *Step, r scheduler.Reading, act scheduler.Action) {
	call, _ := r.Call(act.Call)
	var kept present.Kept
	if blobs := BlobsOf(s.Store); blobs != nil {
		kept = blobs
	}
	st.Action = &StepAction{Action: act, Call: call, Doc: drive.DescribeAction(ctx, st.Thread, r, act, kept, s.Place.Root, tools.Preview)}
}

// kept reads the bytes the store kept under digest.
func (s *Session) kept(ctx context.Context, digest string) ([]byte, error) {
	blobs := BlobsOf(s.Store)
	if blobs == nil {
		return nil, errors.New("this store keeps no contents")
	}
	b, err := blobs.GetBlob(ctx, digest)
	if errors.Is(err, fs.ErrNotExist) {
		short := digest
		if len(short) > 12 {
			short = short[:12]
		}
		return nil, fmt.Errorf("the content %s was not kept (larger than %d bytes, or never read)", short, action.DefaultBlobCap)
	}
	return b, err
}
