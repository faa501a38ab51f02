package stock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// InstructionsName is the name of an instruction file: the user's (beside
// the user's settings), the workspace root's, and one in any directory on
// the way to a path the thread's tool calls named.
const InstructionsName = "AGENTS.md"

// DefaultInstructionsMax is the largest instruction file given to the
// model when the settings say nothing (instructions_max_bytes); a larger
// one is left out, and the record says so.
const DefaultInstructionsMax = 64 << 10

// InstructionsTotalFactor bounds the instruction text of one turn: at
// most this many times the per-file limit, in all. A file past it is left
// out, and the record says so.
const InstructionsTotalFactor = 4

// Instructions reads a workspace's instruction files for the runtime (a
// harness.InstructionReader): the user's, the root's, and those of the
// directories a thread's tool calls touched — parents first, so the
// nearest comes last. It reads as the runtime, not through a sandboxed
// tool: the text only informs the model, and widens nothing, so no trust
// is needed to read it. What it will not read is recorded as left out: a
// file over Max bytes, a symlink that leads out of the workspace or into a
// .git or .harness (the store's, or any other), anything but a regular
// file.
type Instructions struct {
	// Root is the workspace root.
	Root string
	// User is the user's instruction file, "" for none.
	User string
	// Max bounds each file, in bytes; 0 is DefaultInstructionsMax.
	Max int64
	// Hidden are the paths the tools' sandbox hides (the store, the
	// user's configuration and seal directories, …): a project file that
	// leads into one is not read, for the runtime reads what no command
	// may. NewStock sets them from its sandbox.
	Hidden []string
}

// InstructionsOf is the place's instruction reader under the settings:
// the user's file from getenv ($XDG_CONFIG_HOME/harness/AGENTS.md), the
// bound from instructions_max_bytes.
func InstructionsOf(p Place, s Settings, getenv func(string) string) Instructions {
	in := Instructions{Root: p.Root, User: UserInstructionsFile(getenv)}
	if s.InstructionsMaxBytes != nil {
		in.Max = *s.InstructionsMaxBytes
	}
	return in
}

// UserInstructionsFile is the path of the user's instruction file, beside
// the user's settings: $XDG_CONFIG_HOME/harness/AGENTS.md, else
// $HOME/.config/harness/AGENTS.md; "" when neither is set.
func UserInstructionsFile(getenv func(string) string) string {
	f := UserSettingsFile(getenv)
	if f == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(f), InstructionsName)
}

func (in Instructions) max() int64 {
	if in.Max > 0 {
		return in.Max
	}
	return DefaultInstructionsMax
}

// ReadInstructions reads the files in force: the user's, the root's, and
// those in dirs (slash-separated from the root, parents first). A file
// that is not there is not in the list; one left out is, with why.
func (in Instructions) ReadInstructions(ctx context.Context, dirs []string) ([]harness.Instruction, error) {
	var out []harness.Instruction
	total, limit := int64(0), in.max()*InstructionsTotalFactor
	add := func(r harness.Instruction, ok bool) {
		if !ok {
			return
		}
		if r.File.Skipped == "" && total+int64(len(r.Text)) > limit {
			r.File.Skipped = fmt.Sprintf("the instruction files of this turn would pass %d bytes in all (%d times instructions_max_bytes)", limit, InstructionsTotalFactor)
			r.Text = nil
		}
		total += int64(len(r.Text))
		out = append(out, r)
	}
	if in.User != "" {
		add(in.readUser())
	}
	root, err := filepath.EvalSymlinks(in.Root)
	if err != nil {
		return nil, fmt.Errorf("the workspace %s: %w", in.Root, err)
	}
	for _, d := range append([]string{"."}, dirs...) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		add(in.readProject(root, d))
	}
	return out, nil
}

// readUser reads the user's file: it is the person's own, wherever it
// leads.
func (in Instructions) readUser() (harness.Instruction, bool) {
	r := harness.Instruction{File: facts.InstructionFile{Scope: facts.InstructionsUser, Path: in.User}}
	real, err := filepath.EvalSymlinks(in.User)
	if err != nil {
		return r, false // not there
	}
	return in.read(r, real)
}

// read reads the file real resolves to into r; ok is false when it is
// not there.
func (in Instructions) read(r harness.Instruction, real string) (harness.Instruction, bool) {
	text, size, why, ok := readInstructionFile(real, in.max())
	if !ok {
		return r, false
	}
	r.File.Size, r.File.Skipped, r.Text = size, why, text
	if why == "" {
		r.File.Digest = facts.ContentDigest(text)
	}
	return r, true
}

// readProject reads dir's file in the workspace whose resolved root is
// root; ok is false when there is none.
func (in Instructions) readProject(root, dir string) (harness.Instruction, bool) {
	rel := path.Join(dir, InstructionsName)
	r := harness.Instruction{File: facts.InstructionFile{Scope: facts.InstructionsProject, Path: rel}}
	real, why, ok := projectFile(in.Root, root, rel, in.Hidden, "")
	switch {
	case !ok:
		return r, false
	case why != "":
		r.File.Skipped = why
		return r, true
	}
	return in.read(r, real)
}

// projectFile resolves the file rel (slash-separated) of the workspace at
// ws, whose resolved root is root, for the runtime to read: real is where
// it leads; why, when set, says why it is not to be read — a symlink that
// leads out of the workspace, into a .git or a .harness, into a place
// hidden from commands, or to a file that is neither of rel's name nor
// Markdown; ok is false when there is nothing there. A file that leads
// straight into the directory home (slash-separated from the root; "" for
// none) is read though home is hidden: .harness/agents is such a place,
// which commands cannot write.
func projectFile(ws, root, rel string, hidden []string, home string) (real, why string, ok bool) {
	name := filepath.Join(ws, filepath.FromSlash(rel))
	if _, err := os.Lstat(name); err != nil {
		return "", "", false // not there (or under a file: not there either)
	}
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return "", "a symlink that leads nowhere readable", true
	}
	if !within(root, real) {
		return "", "a symlink that leads out of the workspace: not followed", true
	}
	inside, _ := filepath.Rel(root, real)
	atHome := home != "" && path.Dir(filepath.ToSlash(inside)) == home
	if !atHome && slices.ContainsFunc(strings.Split(filepath.ToSlash(inside), "/"), func(part string) bool {
		return part == StoreDir || part == ".git"
	}) {
		return "", "it leads into a .harness or a .git: not read", true
	}
	if !atHome && slices.ContainsFunc(hidden, func(h string) bool {
		if rh, err := filepath.EvalSymlinks(h); err == nil {
			h = rh
		}
		return within(h, real)
	}) {
		return "", "it leads into a place hidden from commands (the store, the user's configuration): not read", true
	}
	if filepath.Base(real) != path.Base(rel) && !strings.EqualFold(filepath.Ext(real), ".md") {
		// A symlink may give another Markdown file (CLAUDE.md, say) as
		// the file, not any file the workspace holds.
		return "", "a symlink to a file that is not Markdown (.md): not followed", true
	}
	return real, "", true
}

// readInstructionFile reads a regular file of at most max bytes, not
// following a symlink in its last element (the caller resolved it). why
// says why it was left out; ok is false when it is not there.
func readInstructionFile(name string, max int64) (text []byte, size int64, why string, ok bool) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, 0, "", false
	}
	if err != nil {
		return nil, 0, "it cannot be read: " + errorText(err), true
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, "it cannot be read: " + errorText(err), true
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, "not a regular file", true
	}
	if fi.Size() > max {
		return nil, fi.Size(), tooBig(fi.Size(), max), true
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fi.Size(), "it cannot be read: " + errorText(err), true
	}
	if int64(len(b)) > max {
		return nil, int64(len(b)), tooBig(int64(len(b)), max), true
	}
	return b, int64(len(b)), "", true
}

func tooBig(size, max int64) string {
	return fmt.Sprintf("%d bytes, over the limit of %d bytes a file (instructions_max_bytes)", size, max)
}

// errorText is an error without the path it names (the record names the
// file already).
func errorText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
