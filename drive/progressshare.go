package drive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Progress across processes: a process that drives a thread on a store
// another process serves (a run in a terminal, a worker, through a
// harness server's socket) hands that process its progress events, so
// that the server's page and API show them as they show the threads the
// server drives itself. An event travels as EncodeEvent's bytes and is
// read back by DecodeEvent, which takes only what a page may show: the
// model's text and a command's output, never a question (those are
// facts: question.asked) or anything it does not know.

// ErrNotAnEvent: bytes that are not a progress event another process may
// hand over (see DecodeEvent).
var ErrNotAnEvent = errors.New("not a progress event")

// EncodeEvent is e as it travels to another process.
func EncodeEvent(e Event) ([]byte, error) {
	return json.Marshal(e)
}

// DecodeEvent reads an event that another process encoded with
// EncodeEvent, for the thread id it was handed over for (e.Thread is
// id). It takes the kinds EventTurnStarted, EventText, EventTurnEnded
// and EventOutput (of "stdout" or "stderr"); anything else — an unknown
// field, a question (EventAsked), an event of another thread — is
// ErrNotAnEvent.
func DecodeEvent(id string, data []byte) (Event, error) {
	var e Event
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Event{}, fmt.Errorf("%w: %w", ErrNotAnEvent, err)
	}
	if dec.More() {
		return Event{}, fmt.Errorf("%w: more than one value", ErrNotAnEvent)
	}
	switch {
	case e.Thread != id:
		return Event{}, fmt.Errorf("%w: of thread %q, handed over for %q", ErrNotAnEvent, e.Thread, id)
	case e.Request != "" || e.Elicit != nil:
		return Event{}, fmt.Errorf("%w: a question is a fact", ErrNotAnEvent)
	}
	switch e.Kind {
	case EventTurnStarted, EventText, EventTurnEnded:
		if e.ActionID != "" || e.Stream != "" {
			return Event{}, fmt.Errorf("%w: a turn's event names an action", ErrNotAnEvent)
		}
	case EventOutput:
		if e.ActionID == "" || (e.Stream != "stdout" && e.Stream != "stderr") {
			return Event{}, fmt.Errorf("%w: output of no action or stream", ErrNotAnEvent)
		}
	default:
		return Event{}, fmt.Errorf("%w: kind %q", ErrNotAnEvent, e.Kind)
	}
	return e, nil
}
