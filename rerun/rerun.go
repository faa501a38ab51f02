package rerun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
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
	// Live goes on past a divergence, in the scratch workspace Runtime
	// acts on (see Scratch); without it the rerun stops there.
	Live bool
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
	key := Key(opts.Model, opts.Overrides, opts.Live)
	id := opts.As
	if id == "" {
		id = ID(opts.From, key)
	}
	if err := thread.ValidateID(id); err != nil {
		return nil, fmt.Errorf("rerun %s: the rerun's id: %w", opts.From, err)
	}
	if id == opts.From {
		return nil, fmt.Errorf("rerun %s into itself: %w", opts.From, ErrOtherRerun)
	}
	link := facts.Rerun{Model: opts.Model, Key: key, Overrides: opts.Overrides, Live: opts.Live}
	mine, err := begin(ctx, store, orig, id, link)
	if err != nil {
		return nil, err
	}
	s := &server{store: store, orig: orig, to: id, live: opts.Live}
	for _, t := range mine.Turns {
		if t.Compared != nil && t.Compared.Diverged != nil {
			s.diverged = true
		}
	}
	svc := opts.Runtime.Services
	svc.Rerun = s
	rt, err := harness.NewRuntime(store, svc, opts.Runtime.Config)
	if err != nil {
		return nil, fmt.Errorf("rerun %s: %w", opts.From, err)
	}
	rt.Tracer, rt.Sealer = opts.Runtime.Tracer, opts.Runtime.Sealer
	out, err := rt.Thread(opts.Actor, id).Resume(ctx)
	if err != nil {
		return nil, fmt.Errorf("rerun %s as %s: %w", opts.From, id, err)
	}
	rep, err := Compare(ctx, store, id, opts.Asks)
	if err != nil {
		return nil, err
	}
	rep.Outcome = out.Status
	rep.Reason = out.Reason
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
	drafts := make([]facts.Draft, 0, orig.First+1)
	for f, err := range store.Read(ctx, orig.Thread, 1) {
		if err != nil {
			return nil, fmt.Errorf("rerun %s: %w", orig.Thread, err)
		}
		if f.Seq > orig.First {
			break
		}
		drafts = append(drafts, facts.Draft{Kind: f.Kind, Cause: f.Cause, Data: f.Data})
	}
	d, err := facts.NewDraft(facts.KindThreadForked, facts.IngressCause("rerun-"+link.Key),
		facts.ThreadForked{From: orig.Thread, At: orig.First, Rerun: &link})
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
