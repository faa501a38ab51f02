package rerun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/thread"
)

// Options say what to rerun, on what.
type Options struct {
	// From is the thread to rerun.
	From string
	// As is the rerun's thread id; "" is ID(From, the key).
	As string
	// Model is the model spec the rerun runs on, as recorded; Runtime's
	// services hold the model itself.
	Model string
	// Overrides are the rerun's other changes as "name=value", recorded
	// and digested with the model into the key.
	Overrides []string
	// Live goes on past a divergence, for real, in the scratch workspace
	// Runtime acts in (its Services.Workspace), never in Source: a new
	// rerun copies Source there, and at the divergence the original's
	// file effects after the diverging turn began are undone in the copy
	// (refused, with ErrLiveRefused, when a kept content is missing).
	// Without it the rerun stops at the divergence.
	Live bool
	// Approval, for a live rerun, answers the confirmations of the calls
	// it runs past the divergence (drive.ApplyApproval); a call it does
	// not approve parks the rerun, as any thread.
	Approval *drive.Approval
	// Source is the person's workspace a live rerun copies; Skip are the
	// paths in it not copied (a store kept inside it).
	Source string
	Skip   []string
	// Runtime drives the rerun: its store holds the original, and its
	// services the new model (and, live, the scratch workspace's tools).
	// Run adds the Rerunner; the runtime itself is not changed.
	Runtime *harness.Runtime
	// Actor is the actor the rerun runs as: its configuration is what the
	// rerun's system.configured records — the model's name (which prices
	// its turns), the system prompt, the tools offered. An override of
	// the prompt or the tools is an actor composed with it (and named in
	// Overrides).
	Actor harness.Actor
	// Instructions, when not nil, are given to the model in place of the
	// instruction files (AGENTS.md) the runtime would read: the rerun's
	// instructions.read names them OverridePath. Empty gives none.
	Instructions []byte
	// Tools, when not nil, are the only tools the rerun is offered, and
	// WithoutTools are left out; each must be one the original was
	// offered (ErrOverride otherwise). Narrowed, the actor is the stock
	// composition (harness.DelegatingActor, or CodingActor without the
	// delegate tool) of Runtime's configuration and the tools kept.
	Tools        []string
	WithoutTools []string
	// Asks, when set, says whether a call to the tool named would be put
	// to a person: the report lists the calls the rerun made but did not
	// run that would have needed an approval.
	Asks func(tool string) bool
}

// Key is the digest of a rerun's model spec and overrides (and whether it
// goes on live): a suite reruns a thread once per key.
func Key(model string, overrides []string, live bool) string {
	h := sha256.New()
	h.Write([]byte("rerun\x00model\x00" + model + "\x00"))
	for _, o := range overrides {
		h.Write([]byte("override\x00" + o + "\x00"))
	}
	if live {
		h.Write([]byte("live\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ID is the thread id of the rerun of from under key: "<from>-rr-<the
// key's first 8 hex digits>".
func ID(from, key string) string { return from + "-rr-" + key[:8] }

// Run reruns opts.From (see the package doc) and returns the comparison.
// A rerun whose thread exists already (the same thread under the same
// key) is resumed, not begun again: what it recorded stands.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if opts.Runtime == nil {
		return nil, errors.New("rerun: no runtime")
	}
	store := opts.Runtime.Store
	orig, err := Read(ctx, store, opts.From)
	if err != nil {
		return nil, fmt.Errorf("rerun %s: %w", opts.From, err)
	}
	if orig.First == 0 {
		return nil, fmt.Errorf("rerun %s: %w", opts.From, ErrNoTurns)
	}
	overrides := opts.overrides()
	key := Key(opts.Model, overrides, opts.Live)
	id := opts.As
	if id == "" {
		id = ID(opts.From, key)
	} else if err := harness.ValidateNewRoot(id); err != nil {
		return nil, fmt.Errorf("rerun %s: the rerun's id: %w", opts.From, err)
	}
	if err := thread.ValidateID(id); err != nil {
		return nil, fmt.Errorf("rerun %s: the rerun's id: %w", opts.From, err)
	}
	if id == opts.From {
		return nil, fmt.Errorf("rerun %s into itself: %w", opts.From, ErrOtherRerun)
	}
	link := facts.Rerun{Model: opts.Model, Key: key, Overrides: overrides, Live: opts.Live}
	tools, actor, narrowed, err := opts.narrow(orig, opts.Runtime.Services)
	if err != nil {
		return nil, fmt.Errorf("rerun %s: %w", opts.From, err)
	}
	scratch := opts.Runtime.Services.Workspace
	if opts.Live {
		if err := checkScratch(opts.Source, scratch); err != nil {
			return nil, fmt.Errorf("rerun %s: %w", opts.From, err)
		}
		if link.Scratch, err = realDir(scratch); err != nil {
			return nil, fmt.Errorf("rerun %s: %w", opts.From, err)
		}
	}
	if opts.Instructions != nil && opts.Runtime.Services.Blobs != nil {
		// Kept from the start, so that a rerun cut off before its first
		// turn can be resumed with them (see Again).
		if _, err := opts.Runtime.Services.Blobs.PutBlob(ctx, opts.Instructions); err != nil {
			return nil, fmt.Errorf("rerun %s: keep the instructions: %w", opts.From, err)
		}
	}
	_, headErr := store.Head(ctx, id)
	switch {
	case opts.Live && headErr != nil:
		// Begun now: the scratch copy is the workspace as it is, copied
		// before the rerun records it.
		if err := CopyWorkspace(opts.Source, scratch, opts.Skip); err != nil {
			return nil, fmt.Errorf("rerun %s: %w", opts.From, err)
		}
	}
	mine, err := begin(ctx, store, orig, id, link)
	if err != nil {
		return nil, err
	}
	s := &server{store: store, orig: orig, to: id, live: opts.Live}
	if opts.Live {
		s.restore = func(ctx context.Context, to uint64) error {
			_, err := rewind.RestoreIn(ctx, opts.Runtime, opts.Actor, orig.Thread, to)
			return err
		}
	}
	s.next = 1
	for _, t := range mine.Turns {
		if t.Compared != nil && t.Compared.Diverged != nil {
			s.diverged = true
		}
		s.next = t.N + 1
	}
	svc := opts.Runtime.Services
	svc.Rerun = s
	if narrowed {
		svc.Tools = tools
	}
	switch {
	case opts.Instructions != nil:
		svc.Instructions = instructionsOverride(opts.Instructions)
	case svc.Instructions != nil:
		// The original's turns' instructions, as they were given.
		svc.Instructions = servedInstructions{s: s, orig: orig.Instructions, blobs: svc.Blobs, after: svc.Instructions}
	}
	if !opts.Live {
		// Nothing runs: not the hooks of the thread's own events either
		// (each due is recorded as not run).
		svc.Hooks = nil
	}
	rt, err := harness.NewRuntime(store, svc, opts.Runtime.Config)
	if err != nil {
		return nil, fmt.Errorf("rerun %s: %w", opts.From, err)
	}
	rt.Tracer, rt.Sealer = opts.Runtime.Tracer, opts.Runtime.Sealer
	th := rt.Thread(actor, id)
	if opts.Live && headErr == nil {
		// Cut off midway: it goes on in the copy it recorded, as it left
		// it (an ended one only in the copy it recorded).
		st, err := drive.Inspect(ctx, th)
		if err != nil {
			return nil, fmt.Errorf("rerun %s as %s: %w", opts.From, id, err)
		}
		ended := st.Status == harness.StatusDone || st.Status == harness.StatusStopped
		if err := sameScratch(ctx, store, id, link.Scratch, opts.Runtime.Services.Observer, !ended); err != nil {
			return nil, fmt.Errorf("rerun %s as %s: %w", opts.From, id, err)
		}
	}
	out, err := th.Resume(ctx)
	for err == nil && out.Status == harness.StatusParked && opts.Live && opts.Approval != nil {
		st, ierr := drive.Inspect(ctx, th)
		if ierr != nil {
			return nil, fmt.Errorf("rerun %s as %s: %w", opts.From, id, ierr)
		}
		_, posted, aerr := drive.ApplyApproval(ctx, th, *opts.Approval, st.Waits)
		if aerr != nil {
			return nil, fmt.Errorf("rerun %s as %s: %w", opts.From, id, aerr)
		}
		if posted == 0 {
			break
		}
		out, err = th.Resume(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("rerun %s as %s: %w", opts.From, id, err)
	}
	rep, err := Compare(ctx, store, id, opts.Asks)
	if err != nil {
		return nil, err
	}
	rep.Outcome = out.Status
	rep.Reason = out.Reason
	if s.liveErr != nil {
		return rep, fmt.Errorf("rerun %s as %s: %w: %w", opts.From, id, ErrLiveRefused, s.liveErr)
	}
	return rep, nil
}

// begin makes the rerun's thread — the original's facts up to its first
// message, then thread.forked naming the original and the rerun, in one
// append — or finds it made, and returns its recording.
func begin(ctx context.Context, store thread.Store, orig *Recording, id string, link facts.Rerun) (*Recording, error) {
	if mine, err := Read(ctx, store, id); err == nil {
		if mine.Rerun == nil || mine.From != orig.Thread || mine.Rerun.Key != link.Key {
			return nil, fmt.Errorf("rerun %s as %s: %w", orig.Thread, id, ErrOtherRerun)
		}
		return mine, nil
	} else if !errors.Is(err, harness.ErrUnknownThread) {
		return nil, fmt.Errorf("rerun %s as %s: %w", orig.Thread, id, err)
	}
	// The facts copied chain as the log says (thread.ReadLinked): the
	// original up to its first message, and the messages before its first
	// turn after it (the rest of what the model was first offered).
	drafts := make([]facts.Draft, 0, orig.First+1)
	upto := orig.First
	if len(orig.Before) > 0 {
		upto = max(upto, orig.Before[len(orig.Before)-1])
	}
	var hash facts.Hash
	_, err := thread.ReadLinked(ctx, store, orig.Thread, upto, func(f facts.Fact) error {
		if f.Seq > orig.First && !slices.Contains(orig.Before, f.Seq) {
			return nil
		}
		if f.Seq == orig.First {
			hash = f.Hash()
		}
		drafts = append(drafts, facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rerun %s: %w", orig.Thread, err)
	}
	d, err := facts.NewDraft(facts.KindThreadForked, facts.IngressCause("rerun-"+link.Key),
		facts.ThreadForked{From: orig.Thread, At: orig.First, Hash: hash.String(), Rerun: &link})
	if err != nil {
		return nil, fmt.Errorf("rerun %s: %w", orig.Thread, err)
	}
	if _, err := store.Append(ctx, id, 0, append(drafts, d)...); err != nil && !errors.Is(err, thread.ErrConflict) {
		return nil, fmt.Errorf("rerun %s as %s: %w", orig.Thread, id, err)
	}
	// Made now, or by another at the same moment: what the log says.
	mine, err := Read(ctx, store, id)
	if err != nil {
		return nil, fmt.Errorf("rerun %s as %s: %w", orig.Thread, id, err)
	}
	if mine.Rerun == nil || mine.From != orig.Thread || mine.Rerun.Key != link.Key {
		return nil, fmt.Errorf("rerun %s as %s: %w", orig.Thread, id, ErrOtherRerun)
	}
	return mine, nil
}
