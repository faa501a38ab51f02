package facts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// KindInstructionsRead: the instruction files (AGENTS.md) a model turn was
// given, recorded before the turn's model.turn, under the same cause, when
// they differ from the ones recorded last — the first turn's, and a turn
// after any of them changed, appeared or went (InstructionsRead). Their
// bytes are blobs, kept under each file's digest.
const KindInstructionsRead Kind = "instructions.read"

func init() {
	register[InstructionsRead](KindInstructionsRead)
}

// The scopes of an instruction file.
const (
	// InstructionsUser is the user's own file, outside every workspace.
	InstructionsUser = "user"
	// InstructionsProject is a file of the workspace: at its root, or in a
	// directory on the way to a path the thread's tool calls named.
	InstructionsProject = "project"
)

// InstructionsRead is the payload of instructions.read: every instruction
// file in force for the turn, in the order the model is given them
// (the user's first, then the workspace root's, the nearest last).
type InstructionsRead struct {
	// Turn is the model turn they were read for.
	Turn int `msgpack:"turn,omitempty" json:"turn,omitempty"`
	// Files are the files; none when every file recorded before is gone.
	Files []InstructionFile `msgpack:"files,omitempty" json:"files,omitempty"`
}

// InstructionFile is one instruction file as a turn was given it, or why
// it was left out.
type InstructionFile struct {
	// Scope is InstructionsUser or InstructionsProject.
	Scope string `msgpack:"scope" json:"scope"`
	// Path is where the file is named: for the project, slash-separated
	// from the workspace root ("AGENTS.md", "pkg/AGENTS.md"); for the
	// user, the absolute path.
	Path string `msgpack:"path" json:"path"`
	// Digest is the SHA-256 (hex) of the bytes the model was given, the
	// blob they are kept under; "" for a file left out.
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// Size is the file's size in bytes (of a file left out too, when it
	// could be read).
	Size int64 `msgpack:"size,omitempty" json:"size,omitempty"`
	// Skipped says why the file was left out — over the size limit, a
	// symlink that leads out of the workspace, not a regular file — "" for
	// a file the model was given.
	Skipped string `msgpack:"skipped,omitempty" json:"skipped,omitempty"`
}

// Validate requires a known scope and a path on every file, and a digest
// on every file not left out.
func (p InstructionsRead) Validate() error {
	if p.Turn < 0 {
		return fmt.Errorf("turn %d is negative", p.Turn)
	}
	for i, f := range p.Files {
		if err := f.Validate(); err != nil {
			return fmt.Errorf("files[%d]: %w", i, err)
		}
	}
	return nil
}

// Validate requires a known scope, a path, and a digest unless the file
// was left out.
func (f InstructionFile) Validate() error {
	if err := oneOf("scope", f.Scope, InstructionsUser, InstructionsProject); err != nil {
		return err
	}
	if f.Path == "" {
		return errors.New("missing path")
	}
	if f.Skipped == "" && f.Digest == "" {
		return fmt.Errorf("%s: missing digest (a file given to the model names its bytes)", f.Path)
	}
	if f.Size < 0 {
		return fmt.Errorf("%s: size %d is negative", f.Path, f.Size)
	}
	return nil
}

// Same reports whether two readings name the same files, in the same
// order, with the same bytes and the same reasons for leaving one out.
func (p InstructionsRead) Same(q InstructionsRead) bool {
	if len(p.Files) != len(q.Files) {
		return false
	}
	for i := range p.Files {
		if p.Files[i] != q.Files[i] {
			return false
		}
	}
	return true
}

// ContentDigest is the SHA-256 of b, hex: the digest an instruction file
// records, and the blob its bytes are kept under.
func ContentDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
