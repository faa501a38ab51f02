package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/thread"
)

// Undo and fork from the page: each preview shows, as diffs of the kept
// contents, what the undo would do to the workspace — or, for a fork,
// what the thread changed after the fork's seq, which the workspace keeps
// (a fork changes no file) — and a button that does it through the call
// harness undo and harness fork make (rewind.Undo, rewind.Fork). An undo
// is bound to the head its preview was made at (rewind.UndoSeen): if the
// thread moved meanwhile, it is refused and the preview is shown again.

// holdWait bounds how long an undo from the page waits for a thread
// another process drives.
const holdWait = 10 * time.Second

// undoData is the undo preview's.
type undoData struct {
	Thread string
	To     uint64
	Plan   rewind.UndoPlan
	// Diffs are the plan's changes, as a person reads them.
	Diffs []FileChange
	// Error is why the plan cannot be carried out (an *UndoError);
	// Failed why the undo just confirmed was not (the preview is of the
	// thread as it is now).
	Error, Failed string
	Who           string
	CSRF          string
}

// diffsOf renders changes from the contents the store kept.
func (s *Server) diffsOf(ctx context.Context, cs []facts.PathChange) []FileChange {
	var kept present.Kept
	if s.blobs != nil {
		kept = s.blobs
	}
	out := make([]FileChange, len(cs))
	for i, c := range cs {
		out[i] = present.DiffOf(ctx, c, kept)
	}
	return out
}

// undoPreview is the undo page of thread id back to seq to, with the
// error of a failed undo (or "").
func (s *Server) undoPreview(r *http.Request, id string, to uint64, failed error) (string, any, error) {
	d := undoData{Thread: id, To: to, Who: who(r)}
	if idn, ok := IdentityOf(r.Context()); ok {
		d.CSRF = s.csrf(idn.secret)
	}
	var err error
	d.Plan, err = s.undoPlan(r.Context(), id, to)
	var ue *rewind.UndoError
	switch {
	case errors.As(err, &ue):
		d.Error = err.Error()
	case errors.Is(err, harness.ErrUnknownThread), errors.Is(err, thread.ErrNotFound), errors.Is(err, ErrNotHere):
		return "", nil, err
	case err != nil:
		return "", nil, badRequestIf(err)
	}
	if failed != nil {
		d.Failed = failed.Error()
	}
	d.Diffs = s.diffsOf(r.Context(), d.Plan.Changes())
	return "undo", d, nil
}

func (s *Server) undoPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	to, err := seqParam(r, "to", 0)
	if err != nil {
		return "", nil, err
	}
	return s.undoPreview(r, id, to, nil)
}

// formSeq is the form field name as a seq.
func formSeq(r *http.Request, name string) (uint64, error) {
	v := r.PostFormValue(name)
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, badRequest("%s=%q: want a seq", name, v)
	}
	return n, nil
}

// undo undoes thread id back to seq to as the person by confirmed it
// from a preview made at the head seen.
func (s *Server) undo(ctx context.Context, by, id string, to, seen uint64) (rewind.UndoPlan, error) {
	st, err := s.inspect(ctx, id)
	if err != nil {
		return rewind.UndoPlan{}, err
	}
	if !s.here(st.Workspace) {
		return rewind.UndoPlan{}, ErrNotHere
	}
	rt, free, err := s.session.Runtime()
	if err != nil {
		return rewind.UndoPlan{}, err
	}
	defer free()
	ctx, cancel := context.WithTimeout(ctx, holdWait)
	defer cancel()
	return rewind.UndoSeen(ctx, rt, s.opts.Stock.Actor, id, to, by, seen)
}

// pageUndo is the undo preview's button: the undo it showed, or, if it
// cannot be done as shown, the preview again with why.
func (s *Server) pageUndo(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	to, err := formSeq(r, "to")
	if err != nil {
		return "", nil, err
	}
	head, err := formSeq(r, "head")
	if err != nil {
		return "", nil, err
	}
	plan, err := s.undo(r.Context(), who(r), id, to, head)
	if err != nil {
		return s.undoPreview(r, id, to, err)
	}
	seeOther(w, id, url.Values{"undone": {strconv.Itoa(len(plan.Steps))}, "to": {strconv.FormatUint(to, 10)}})
	return "", nil, nil
}

// UndoRequest is the body of POST /api/threads/{id}/undo: the seq to go
// back to, and the head of the thread the preview (GET …/undo?to=)
// was made at; the undo is refused (409, "moved") if the thread is no
// longer there.
type UndoRequest struct {
	To   uint64 `json:"to"`
	Head uint64 `json:"head"`
}

func (s *Server) apiUndoPost(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	var req UndoRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return err
	}
	plan, err := s.undo(r.Context(), who(r), id, req.To, req.Head)
	if refused, ok := undoRefused(err, plan); ok {
		return writeJSON(w, http.StatusConflict, refused)
	}
	if err != nil {
		return badRequestIf(err)
	}
	return writeJSON(w, http.StatusOK, plan)
}

// forkData is the fork preview's.
type forkData struct {
	P ForkPreview
	// Since are the changes the thread made after the fork's seq that the
	// workspace still holds; SinceNote says why they are not shown.
	Since     []FileChange
	SinceNote string
	Error     string
	Who       string
	CSRF      string
}

// forkPreviewPage is the fork page of thread id at seq at, with the
// error of a failed fork (or "").
func (s *Server) forkPreviewPage(r *http.Request, id string, at uint64, failed error) (string, any, error) {
	p, err := s.forkPreview(r.Context(), id, at)
	if err != nil {
		return "", nil, err
	}
	d := forkData{P: p, Who: who(r)}
	if idn, ok := IdentityOf(r.Context()); ok {
		d.CSRF = s.csrf(idn.secret)
	}
	if failed != nil {
		d.Error = failed.Error()
	}
	plan, err := s.undoPlan(r.Context(), id, at)
	if err != nil {
		d.SinceNote = err.Error()
	}
	d.Since = s.diffsOf(r.Context(), plan.Since())
	return "fork", d, nil
}

func (s *Server) forkPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	at, err := seqParam(r, "at", 0)
	if err != nil {
		return "", nil, err
	}
	return s.forkPreviewPage(r, id, at, nil)
}

// fork forks thread id at seq at into as ("" for rewind.ForkID's name),
// as harness fork does; it returns the fork's id and head.
func (s *Server) fork(ctx context.Context, id string, at uint64, as string) (string, thread.Head, error) {
	if as == "" {
		as = rewind.ForkID(id, at)
	}
	h, err := rewind.Fork(ctx, s.store, id, at, as)
	if err != nil {
		return "", h, err
	}
	return as, h, nil
}

// pageFork is the fork preview's button: the new thread's page, or the
// preview again with why there is none.
func (s *Server) pageFork(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	at, err := formSeq(r, "at")
	if err != nil {
		return "", nil, err
	}
	as, _, err := s.fork(r.Context(), id, at, r.PostFormValue("as"))
	if err != nil {
		return s.forkPreviewPage(r, id, at, err)
	}
	seeOther(w, as, url.Values{"forked": {id}, "at": {strconv.FormatUint(at, 10)}})
	return "", nil, nil
}

// ForkRequest is the body of POST /api/threads/{id}/fork: the last seq
// the fork keeps, and its id ("" for ID-atSEQ).
type ForkRequest struct {
	At uint64 `json:"at"`
	As string `json:"as,omitempty"`
}

func (s *Server) apiForkPost(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	var req ForkRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return err
	}
	as, h, err := s.fork(r.Context(), id, req.At, req.As)
	if err != nil {
		return err
	}
	st, err := s.inspect(r.Context(), as)
	if err != nil {
		return fmt.Errorf("forked %s at seq %d into %s, but cannot read it: %w", id, req.At, as, err)
	}
	return writeJSON(w, http.StatusCreated, ForkResult{Thread: as, From: id, At: req.At, Seq: h.Seq, Status: st.Status})
}

// ForkResult is the answer to POST /api/threads/{id}/fork — the document
// harness fork -o json prints: the new thread, the thread and seq it was
// forked from, its head's seq and how it stands.
type ForkResult struct {
	Thread string         `json:"thread"`
	From   string         `json:"from"`
	At     uint64         `json:"at"`
	Seq    uint64         `json:"seq"`
	Status harness.Status `json:"status"`
}

// rewindFlash is what the thread page says after an undo or a fork from
// the page (its query), or nil.
func rewindFlash(q url.Values) *flash {
	if n, err := strconv.Atoi(q.Get("undone")); err == nil && n >= 0 {
		if to, err := strconv.ParseUint(q.Get("to"), 10, 64); err == nil {
			were := "they were"
			if n == 1 {
				were = "it was"
			}
			return &flash{Text: "undone: " + present.Plural(n, "path", "paths") + " restored to how " + were + " at seq " + strconv.FormatUint(to, 10), Class: "ok"}
		}
	}
	if from := q.Get("forked"); from != "" {
		if at, err := strconv.ParseUint(q.Get("at"), 10, 64); err == nil {
			return &flash{Text: "forked from " + present.EscapeLine(from) + " at seq " + strconv.FormatUint(at, 10), Class: "ok"}
		}
	}
	return nil
}
