package serve

import (
	"bufio"
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/present"
)

// Live progress: while the server drives a thread (see Resume), what the
// thread does between two facts — the model's text as it streams, a
// running command's output — goes, as drive's progress events
// (drive.Event), to every stream that follows the thread: the API's
// /api/threads/ID/progress, in the lines of stream-json's progress type,
// and the page's. Nothing of it is recorded: the facts keep what is kept,
// and a stream that misses an event misses nothing of the record.
//
// The run never waits for a stream: each stream has a bounded buffer,
// and an event that does not fit is dropped and counted; the stream then
// says how many it dropped (an event "dropped") after what it kept.

const (
	// followEvents and followBytes bound what one stream holds that it
	// has not yet sent.
	followEvents = 1024
	followBytes  = 1 << 20
)

// liveHub hands the progress events of the threads the server drives to
// the streams that follow them. It keeps, for each thread being driven,
// the events of what is not recorded yet — the current turn's text, the
// output of the commands since the turn before them — so that a stream
// opened in the middle of a command starts with its output so far
// (bounded: replayEvents, replayBytes, the oldest let go).
type liveHub struct {
	mu     sync.Mutex // guards subs and recent
	subs   map[string]map[*follower]struct{}
	recent map[string]*replay
}

// replay is what a new stream of a thread is sent first.
type replay struct {
	events []drive.Event
	size   int
}

const (
	// replayEvents and replayBytes bound what the hub keeps of a thread
	// for streams opened later.
	replayEvents = 512
	replayBytes  = 256 << 10
)

func newLiveHub() *liveHub {
	return &liveHub{subs: map[string]map[*follower]struct{}{}, recent: map[string]*replay{}}
}

// keep notes e for the streams of its thread opened later: a turn's
// start lets go of what came before (recorded by now), a turn's end of
// its text (the model.turn has it).
func (h *liveHub) keep(e drive.Event) {
	r := h.recent[e.Thread]
	if r == nil {
		r = &replay{}
		h.recent[e.Thread] = r
	}
	switch e.Kind {
	case drive.EventTurnStarted:
		r.events, r.size = nil, 0
		return
	case drive.EventTurnEnded:
		kept := r.events[:0]
		r.size = 0
		for _, x := range r.events {
			if x.Kind == drive.EventOutput {
				kept = append(kept, x)
				r.size += len(x.Text)
			}
		}
		r.events = kept
		return
	}
	r.events = append(r.events, e)
	r.size += len(e.Text)
	for len(r.events) > replayEvents || r.size > replayBytes {
		r.size -= len(r.events[0].Text)
		r.events = r.events[1:]
	}
}

// done lets go of what the hub keeps of the thread id (and its
// children's): its drive ended.
func (h *liveHub) done(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for t := range h.recent {
		if t == id || strings.HasPrefix(t, id+".") {
			delete(h.recent, t)
		}
	}
}

// follower is one stream's buffer of a thread's events.
type follower struct {
	mu      sync.Mutex // guards events, size and dropped
	events  []drive.Event
	size    int // the bytes of the events' texts
	dropped int // events that did not fit since the last take
	wake    chan struct{}
}

// follow counts a stream of the thread's progress in; the function
// returned counts it out.
func (h *liveHub) follow(id string) (*follower, func()) {
	f := &follower{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if r := h.recent[id]; r != nil {
		for _, e := range r.events {
			f.put(e)
		}
	}
	if h.subs[id] == nil {
		h.subs[id] = map[*follower]struct{}{}
	}
	h.subs[id][f] = struct{}{}
	return f, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.subs[id], f)
		if len(h.subs[id]) == 0 {
			delete(h.subs, id)
		}
	}
}

// progress is the Progress of a drive of the thread id: each event goes
// to the streams of the thread it names (a child's, in a tree), or of id
// when it names none. It never blocks on a stream.
func (h *liveHub) progress(id string) drive.Progress {
	return func(e drive.Event) {
		if e.Thread == "" {
			e.Thread = id
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.keep(e)
		for f := range h.subs[e.Thread] {
			f.put(e)
		}
	}
}

// put keeps e if it fits, else counts it dropped; and wakes the stream.
func (f *follower) put(e drive.Event) {
	f.mu.Lock()
	if len(f.events) < followEvents && f.size+len(e.Text) <= followBytes {
		f.events = append(f.events, e)
		f.size += len(e.Text)
	} else {
		f.dropped++
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// take returns the events kept and how many were dropped after them, and
// empties the buffer.
func (f *follower) take() ([]drive.Event, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	events, dropped := f.events, f.dropped
	f.events, f.size, f.dropped = nil, 0, 0
	return events, dropped
}

// droppedLine is the data of a stream's event "dropped": n progress
// events were not sent (the stream did not keep up).
func droppedLine(n int) string {
	return fmt.Sprintf(`{"type":"dropped","ephemeral":true,"dropped":%d}`, n)
}

// streamProgress streams the progress events of the thread id as the
// server drives it, each as an event "progress" whose data is enc's
// line, until the client goes, a write times out, or the server closes.
// A stream opened while the server drives the thread starts with what
// the hub kept of it (the current turn's text, the output of its commands
// so far); what is recorded already is not sent: the facts have it.
func (s *Server) streamProgress(w http.ResponseWriter, r *http.Request, id string, enc func(drive.Event) ([]byte, error)) error {
	if _, err := s.store.Head(r.Context(), id); err != nil {
		return err
	}
	f, unfollow := s.live.follow(id)
	defer unfollow()
	bw := startStream(w)
	fmt.Fprintf(bw, "retry: 2000\n\n")
	if err := s.flush(w, bw); err != nil {
		return nil
	}
	ctx := r.Context()
	rc := http.NewResponseController(w)
	keep := time.NewTicker(s.opts.KeepAlive)
	defer keep.Stop()
	for {
		select {
		case <-f.wake:
			events, dropped := f.take()
			for _, e := range events {
				data, err := enc(e)
				if err != nil {
					continue
				}
				if !s.sendEvent(w, rc, bw, "", "progress", data) {
					return nil
				}
			}
			if dropped > 0 && !s.sendEvent(w, rc, bw, "", "dropped", []byte(droppedLine(dropped))) {
				return nil
			}
		case <-keep.C:
			fmt.Fprint(bw, ": alive\n\n")
		case <-ctx.Done():
			return nil
		case <-s.ctx.Done():
			return nil
		}
		if s.flush(w, bw) != nil {
			return nil
		}
	}
}

// sendEvent writes one event of a stream (with its id, unless ""), its
// write bounded in time — a large event goes out as it is written — and
// flushes when the buffer is full; false when the client is gone or too
// slow: no more work for it.
func (s *Server) sendEvent(w http.ResponseWriter, rc *http.ResponseController, bw *bufio.Writer, id, name string, data []byte) bool {
	rc.SetWriteDeadline(time.Now().Add(s.opts.WriteTimeout))
	if id != "" {
		if _, err := fmt.Fprintf(bw, "id: %s\n", id); err != nil {
			return false
		}
	}
	if _, err := fmt.Fprintf(bw, "event: %s\ndata: %s\n\n", name, data); err != nil {
		return false
	}
	return bw.Buffered() <= 24<<10 || s.flush(w, bw) == nil
}

// progressLine is e as stream-json's progress line, on one line.
func progressLine(e drive.Event) ([]byte, error) {
	b, err := drive.AppendProgressLine(nil, e)
	return bytes.TrimSuffix(b, []byte("\n")), err
}

// apiProgress is GET /api/threads/{id}/progress: the thread's progress
// events as the server drives it (Server-Sent Events: "progress", whose
// data is a line of stream-json's progress type, the text raw; "dropped"
// when the client did not keep up).
func (s *Server) apiProgress(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	return s.streamProgress(w, r, id, wholeRunes(progressLine))
}

// pageProgress is the thread page's progress stream: the API's, with
// every text escaped as the terminal escapes it (present.EscapeText:
// control characters, terminal escapes among them, shown as escapes;
// line feeds kept), for the page to show as text.
func (s *Server) pageProgress(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	return s.streamProgress(w, r, id, wholeRunes(func(e drive.Event) ([]byte, error) {
		e.Text = present.EscapeText(e.Text)
		e.Error = present.EscapeLine(e.Error)
		return progressLine(e)
	}))
}

// wholeRunes is enc of command output cut at whole characters: a UTF-8
// character split across two reads of the command's output (its first
// bytes ending one chunk) is held back, at most 3 bytes for each action's
// stream, and sent with the next chunk, so that it is not shown as
// escaped bytes. A stream calls enc from one goroutine.
func wholeRunes(enc func(drive.Event) ([]byte, error)) func(drive.Event) ([]byte, error) {
	carry := map[string]string{} // by action and stream; used by the stream's goroutine alone
	return func(e drive.Event) ([]byte, error) {
		if e.Kind == drive.EventOutput {
			key := e.ActionID + "\x00" + e.Stream
			text := carry[key] + e.Text
			cut := splitTail(text)
			if cut > 0 {
				carry[key] = text[len(text)-cut:]
			} else {
				delete(carry, key)
			}
			e.Text = text[:len(text)-cut]
		}
		return enc(e)
	}
}

// splitTail is how many bytes at the end of s begin a UTF-8 character
// that is not complete yet: 0 to 3.
func splitTail(s string) int {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if utf8.FullRuneInString(s[i:]) {
				return 0
			}
			return len(s) - i
		}
	}
	return 0
}
