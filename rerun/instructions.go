package rerun

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// servedInstructions gives the rerun's turns the instruction files the
// original's same turns were given (its latest instructions.read at or
// before the turn, the bytes from the kept blobs), not the workspace's as
// they are now: the same conversation. After the divergence it reads as
// the runtime would (a live rerun's scratch copy).
type servedInstructions struct {
	s     *server
	orig  []instructionsAt
	blobs action.Blobs
	after harness.InstructionReader
}

// instructionsAt is an instructions.read of the original, by turn.
type instructionsAt struct {
	turn int
	read facts.InstructionsRead
}

// ReadInstructions returns what the original's turn was given.
func (in servedInstructions) ReadInstructions(ctx context.Context, dirs []string) ([]harness.Instruction, error) {
	in.s.mu.Lock()
	diverged, turn := in.s.diverged, in.s.next
	in.s.mu.Unlock()
	if diverged {
		if in.after == nil {
			return nil, nil
		}
		return in.after.ReadInstructions(ctx, dirs)
	}
	var at *facts.InstructionsRead
	for i := range in.orig {
		if in.orig[i].turn <= turn {
			at = &in.orig[i].read
		}
	}
	if at == nil {
		return nil, nil
	}
	out := make([]harness.Instruction, 0, len(at.Files))
	for _, f := range at.Files {
		ins := harness.Instruction{File: facts.InstructionFile{Scope: f.Scope, Path: f.Path, Skipped: f.Skipped, Size: f.Size}}
		if f.Skipped == "" {
			if in.blobs == nil {
				return nil, fmt.Errorf("the original's instructions %s: %w: no blobs are kept here", f.Path, ErrServe)
			}
			b, err := in.blobs.GetBlob(ctx, f.Digest)
			if err != nil {
				return nil, fmt.Errorf("the original's instructions %s (%s): %w: %w", f.Path, f.Digest, ErrServe, err)
			}
			ins.Text = b
		}
		out = append(out, ins)
	}
	return out, nil
}
