package rerun

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// Link returns what thread id records of the rerun it is — its
// thread.forked's Rerun and the thread it reruns — or nil when it is no
// rerun.
// It reads the log only up to its first model turn: a rerun's
// thread.forked comes before.
func Link(ctx context.Context, store thread.Store, id string) (*facts.Rerun, string, error) {
	for f, err := range store.Read(ctx, id, 1) {
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", id, err)
		}
		switch f.Kind {
		case facts.KindThreadForked:
			p, err := facts.Decode[facts.ThreadForked](f)
			if err != nil {
				return nil, "", err
			}
			if p.Rerun != nil {
				return p.Rerun, p.From, nil
			}
		case facts.KindModelTurn:
			return nil, "", nil
		}
	}
	return nil, "", nil
}

// Again returns the options that go on with rerun id as it was begun:
// base (its runtime, actor, approval, source) with the thread it reruns,
// the model spec, whether it is live, and the overrides its
// thread.forked records — the tools kept and left out read back, the
// instructions read back from blobs by their digest (kept there when the
// rerun began). The key they give must be the recorded one: a rerun
// whose overrides cannot be read back (a kept content missing, a system
// prompt override on a rerun cut off before its system.configured) is
// ErrOverride, and is to be run again with `harness rerun`.
func Again(ctx context.Context, store thread.Store, blobs action.Blobs, id string, base Options) (Options, error) {
	r, err := Read(ctx, store, id)
	if err != nil {
		return Options{}, err
	}
	if r.Rerun == nil {
		return Options{}, fmt.Errorf("%s: %w", id, ErrNotRerun)
	}
	link := r.Rerun
	o := base
	o.From, o.As, o.Model, o.Live = r.From, id, link.Model, link.Live
	o.Overrides, o.Tools, o.WithoutTools, o.Instructions = nil, nil, nil, nil
	for _, ov := range link.Overrides {
		name, value, _ := strings.Cut(ov, "=")
		switch name {
		case "tools":
			o.Tools = []string{}
			if value != "" {
				o.Tools = strings.Split(value, ",")
			}
		case "without_tools":
			o.WithoutTools = strings.Split(value, ",")
		case "instructions":
			digest, ok := strings.CutPrefix(value, "sha256:")
			if !ok || blobs == nil {
				return Options{}, fmt.Errorf("%w: %s: the instructions %s cannot be read back", ErrOverride, id, value)
			}
			b, err := blobs.GetBlob(ctx, digest)
			if err != nil {
				return Options{}, fmt.Errorf("%w: %s: the instructions %s are not kept: %w", ErrOverride, id, value, err)
			}
			o.Instructions = append([]byte{}, b...)
		case "system_prompt":
			if !configured(r) {
				return Options{}, fmt.Errorf("%w: %s was cut off before its system prompt was recorded: begin it again with the same system prompt", ErrOverride, id)
			}
			o.Overrides = append(o.Overrides, ov)
		default:
			o.Overrides = append(o.Overrides, ov)
		}
	}
	if k := KeyOf(o); k != link.Key {
		return Options{}, fmt.Errorf("%w: %s: its overrides give the key %s, not the recorded %s", ErrOverride, id, k[:8], link.Key[:8])
	}
	return o, nil
}

// configured reports whether a rerun recorded a system.configured of its
// own (after its fork).
func configured(r *Recording) bool {
	return r.System != nil && r.SystemSeq > r.Forked
}
