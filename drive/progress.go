package drive

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// What a thread does between two facts is shown as it happens: the
// model's text as it streams, a running command's output as it comes.
// These are progress events, ephemeral: nothing of them is recorded (the
// model.turn and action.completed facts keep what is kept), and a front
// end that misses one misses nothing of the record. Every front end gets
// them through one sink, Progress (Options.Progress, WithProgress).

// EventKind says what a progress Event tells.
type EventKind string

// The kinds of progress events.
const (
	// EventTurnStarted: a model turn was sent (Turn is its number).
	EventTurnStarted EventKind = "turn_started"
	// EventText: a piece of the model's text, as it streamed (Text).
	EventText EventKind = "text"
	// EventTurnEnded: the turn's answer is complete, or (Error set) the
	// turn stopped before it was: the text streamed since its start is
	// not kept, and the turn is tried again from its start or fails.
	EventTurnEnded EventKind = "turn_ended"
	// EventOutput: a piece of a running command's output (ActionID,
	// Stream, Text).
	EventOutput EventKind = "output"
	// EventAsked: a running action put a question to a person — an MCP
	// server's elicitation (ActionID, Request, Text the server's message,
	// Elicit what it asks for). The question.asked fact records it; a
	// person answers it from any front end while the action runs.
	EventAsked EventKind = "asked"
)

// Event is one progress event. Text is the model's or the command's,
// raw: data that may hold anything, to be escaped before a terminal
// shows it. A command's output is cut where its pipe was read, not at
// line or character boundaries; bytes that are not UTF-8 become U+FFFD
// in JSON.
type Event struct {
	Kind EventKind `json:"event"`
	// Thread is the thread of a model turn, or of the action whose
	// command's output it is (in a tree, a child's).
	Thread string `json:"thread,omitempty"`
	// Turn is the model turn's number, counting the thread's turns from 1.
	Turn int `json:"turn,omitempty"`
	// ActionID and Stream ("stdout" or "stderr") say whose output Text is.
	ActionID string `json:"action_id,omitempty"`
	Stream   string `json:"stream,omitempty"`
	Text     string `json:"text,omitempty"`
	// Error says why a turn ended without an answer (EventTurnEnded).
	Error string `json:"error,omitempty"`
	// Request and Elicit are the question an action asked (EventAsked).
	Request string        `json:"request_id,omitempty"`
	Elicit  *facts.Elicit `json:"elicit,omitempty"`
}

// Progress receives a thread's progress events as they happen. It is
// called from the goroutine of the model turn (in order, for one turn)
// and from the goroutines that read a command's output (one per stream),
// so it must be safe for concurrent use and return quickly.
type Progress func(Event)

// progressKey carries the Progress of WithProgress.
type progressKey struct{}

// WithProgress returns ctx under which the progress of a thread run with
// it goes to p: the text of the model turns of a model made Live, and
// the output of the commands its actions run. Drive does this itself
// with Options.Progress; a front end that starts a thread (Thread.Start,
// StartNext) before it drives it runs the start under WithProgress, with
// its runtime's model made Live.
func WithProgress(ctx context.Context, p Progress) context.Context {
	if p == nil {
		return ctx
	}
	ctx = context.WithValue(ctx, progressKey{}, p)
	var sent outputSent
	return action.WithOutput(ctx, func(thread, id, stream string, b []byte) {
		if stream == action.StreamAsked {
			var q facts.QuestionAsked
			if json.Unmarshal(b, &q) == nil {
				p(Event{Kind: EventAsked, Thread: thread, ActionID: id, Request: q.RequestID, Text: q.Text, Elicit: q.Elicit})
			}
			return
		}
		b, note := sent.take(thread, id, b)
		if len(b) > 0 {
			p(Event{Kind: EventOutput, Thread: thread, ActionID: id, Stream: stream, Text: string(b)})
		}
		if note != "" {
			p(Event{Kind: EventOutput, Thread: thread, ActionID: id, Stream: stream, Text: note})
		}
	})
}

// MaxLiveOutput bounds the output of one action told to a Progress as it
// comes (a command that prints forever would otherwise be passed on
// whole: to a terminal, a stream-json file, the page). What an action
// prints past it is not told; the record keeps what the tool keeps.
const MaxLiveOutput = 1 << 20

// outputSent counts the output told of each action, to bound it.
type outputSent struct {
	mu sync.Mutex       // guards n
	n  map[string]int64 // bytes told, by thread and action
}

// take returns what of b, more output of action id of thread, may be
// told, and the note to tell once when the bound is reached.
func (o *outputSent) take(thread, id string, b []byte) ([]byte, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil || len(o.n) >= 4096 {
		o.n = map[string]int64{} // an old action's count is not needed again
	}
	k := thread + "\x00" + id
	had := o.n[k]
	total := had + int64(len(b))
	o.n[k] = total
	switch {
	case total <= MaxLiveOutput:
		return b, ""
	case had > MaxLiveOutput:
		return nil, "" // past it, and said so
	}
	return b[:MaxLiveOutput-had], fmt.Sprintf("\n[harness: this action printed more than %d bytes; the rest is not shown as it comes, the record keeps what the tool keeps]\n", MaxLiveOutput)
}

func progressOf(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}

// Live returns m such that its turns, under a context of WithProgress,
// are streamed (when m is a model.Streamer) and told to the Progress:
// the turn's start, its text as it comes, its end. Under any other
// context a turn is m's as it is. Live of a Live model is that model.
func Live(m model.Model) model.Model {
	if m == nil {
		return nil
	}
	if l, ok := m.(live); ok {
		return l
	}
	return live{m}
}

// live is a model made Live.
type live struct{ m model.Model }

// Turn takes the turn with the model, telling its progress.
func (l live) Turn(ctx context.Context, req model.Request) (model.Decision, error) {
	p := progressOf(ctx)
	if p == nil {
		return l.m.Turn(ctx, req)
	}
	p(Event{Kind: EventTurnStarted, Thread: req.Thread, Turn: req.Turn})
	var d model.Decision
	var err error
	if st, ok := l.m.(model.Streamer); ok {
		d, err = st.Stream(ctx, req, func(delta string) {
			if delta != "" {
				p(Event{Kind: EventText, Thread: req.Thread, Turn: req.Turn, Text: delta})
			}
		})
	} else {
		d, err = l.m.Turn(ctx, req)
	}
	end := Event{Kind: EventTurnEnded, Thread: req.Thread, Turn: req.Turn}
	if err != nil {
		end.Error = err.Error()
	}
	p(end)
	return d, err
}
