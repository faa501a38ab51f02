package action

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/seed-7cc7a084/harness/facts"
)

// A declared check is a criterion about a bound target, decided after an
// action: pass or fail, with the reason. It is not a judgement that the
// work was right — FileEquals passing means the file holds those bytes,
// nothing more. Checks are declared as facts.CheckSpec values (so the
// request records them) and decided by the function registered under the
// spec's name.

// The names of the built-in checks.
const (
	CheckFileEquals       = "file_equals"
	CheckFileContains     = "file_contains"
	CheckCommandSucceeds  = "command_succeeds"
	CheckOnlyPathsChanged = "only_paths_changed"
)

// CheckEnv is what a check may look at: the workspace root and the paths
// the observer saw change; and, for a check that runs a command, where
// and how it runs.
type CheckEnv struct {
	// Root is the workspace directory paths are relative to.
	Root string
	// Changed is the observed inventory of the action; nil when nothing
	// could be observed.
	Changed []facts.PathChange
	// Observed is false when no observation was possible.
	Observed bool
	// Sandbox is the sandbox the action's request recorded (nil when it
	// recorded none): a check's command runs in it, as the action's
	// commands do.
	Sandbox *facts.Sandbox
	// Commands runs a check's command (command_succeeds); nil runs none,
	// and such a check is not decided.
	Commands CheckCommands
	// Report is what the adapter said it did: a claim, hostile when the
	// model or a remote wrote it. A check may read it (to say more in its
	// reason) but decides from its bound target — the file, the command,
	// the observed changes — never from the report alone.
	Report facts.Report
}

// CheckCommands runs the command of a declared check (command_succeeds):
// in the sandbox the action's request recorded, the way the action's own
// commands run, never with more authority than they have. Package tools
// has one (tools.Set).
type CheckCommands interface {
	// RunCheck runs argv in the workspace, in the sandbox rec records
	// (nil: the runner's own), and returns the command's report and the
	// record of the sandbox it ran in. The report says how the command
	// ended (StatusSucceeded only for exit 0); an error means it could
	// not be run.
	RunCheck(ctx context.Context, argv []string, rec *facts.Sandbox) (facts.Report, *facts.Sandbox, error)
}

// ErrNoCheckCommands: a check runs a command, and nothing was given to
// run it in a sandbox (CheckEnv.Commands): it is not decided, never run
// with the harness's own authority.
var ErrNoCheckCommands = errors.New("no sandbox to run a check's command in")

// ranIn remembers the sandbox a check's command ran in, for its record.
type ranIn struct {
	CheckCommands
	sandbox *facts.Sandbox
}

func (r *ranIn) RunCheck(ctx context.Context, argv []string, rec *facts.Sandbox) (facts.Report, *facts.Sandbox, error) {
	rep, sb, err := r.CheckCommands.RunCheck(ctx, argv, rec)
	if sb != nil {
		r.sandbox = sb
	}
	return rep, sb, err
}

// CheckFunc decides a check. A returned error means the check could not be
// decided (it is recorded as a fail with the error as the reason).
type CheckFunc func(ctx context.Context, spec facts.CheckSpec, env CheckEnv) (pass bool, reason string, err error)

var (
	checksMu sync.RWMutex // guards checks and validators
	checks   = map[string]CheckFunc{}
	// validators check a spec's target and args when a call declaring it
	// is requested (see RegisterCheckArgs).
	validators = map[string]func(facts.CheckSpec) error{}
)

// RegisterCheckArgs makes validate check the target and args of every
// spec naming the registered check name when a call declaring it is
// requested, before anyone is asked: a spec it refuses (its error
// wrapped in ErrBadCheckArgs) refuses the request, rather than a check
// that cannot be decided found after the effect. It panics if name is
// not registered, already has a validator, or validate is nil: call it
// from an init function, after RegisterCheck.
func RegisterCheckArgs(name string, validate func(spec facts.CheckSpec) error) {
	checksMu.Lock()
	defer checksMu.Unlock()
	if _, ok := checks[name]; !ok || validate == nil {
		panic("action.RegisterCheckArgs: " + name + " is not a registered check, or nil function")
	}
	if _, dup := validators[name]; dup {
		panic("action.RegisterCheckArgs: " + name + " validated twice")
	}
	validators[name] = validate
}

// RegisterCheck makes f decide the checks named name. It panics if name is
// empty or already registered: call it from an init function.
func RegisterCheck(name string, f CheckFunc) {
	checksMu.Lock()
	defer checksMu.Unlock()
	if name == "" || f == nil {
		panic("action.RegisterCheck: empty name or nil function")
	}
	if _, dup := checks[name]; dup {
		panic("action.RegisterCheck: " + name + " registered twice")
	}
	checks[name] = f
}

// ErrUnknownCheck: a spec names no registered check.
var ErrUnknownCheck = errors.New("unknown check")

// ErrBadCheckArgs: a spec's target or args are not what its check takes
// (see RegisterCheckArgs).
var ErrBadCheckArgs = errors.New("malformed check arguments")

// ValidateCheck returns an error wrapping ErrUnknownCheck when spec names
// no registered check, and one wrapping ErrBadCheckArgs when the check's
// validator (RegisterCheckArgs) refuses its target or args: what a
// request is refused for before anyone is asked to approve it, rather
// than a check found undecidable after the effect.
func ValidateCheck(spec facts.CheckSpec) error {
	checksMu.RLock()
	_, ok := checks[spec.Name]
	validate := validators[spec.Name]
	names := make([]string, 0, len(checks))
	if !ok {
		for name := range checks {
			names = append(names, name)
		}
	}
	checksMu.RUnlock()
	if ok {
		if validate == nil {
			return nil
		}
		if err := validate(spec); err != nil {
			return fmt.Errorf("check %q: %w: %w", spec.Name, ErrBadCheckArgs, err)
		}
		return nil
	}
	slices.Sort(names)
	return fmt.Errorf("check %q: %w (the checks are %s)", spec.Name, ErrUnknownCheck, strings.Join(names, ", "))
}

// Decide runs the check a spec declares and returns its record; a check
// that ran a command through env.Commands records the sandbox it ran in.
func Decide(ctx context.Context, actionID string, spec facts.CheckSpec, env CheckEnv) facts.CheckRecorded {
	rec := facts.CheckRecorded{ActionID: actionID, Check: spec, Verdict: facts.VerdictFail}
	checksMu.RLock()
	f := checks[spec.Name]
	checksMu.RUnlock()
	if f == nil {
		rec.Reason = fmt.Sprintf("%s: %v", spec.Name, ErrUnknownCheck)
		return rec
	}
	var ran *ranIn
	if env.Commands != nil {
		ran = &ranIn{CheckCommands: env.Commands}
		env.Commands = ran
	}
	pass, reason, err := f(ctx, spec, env)
	if ran != nil {
		rec.Sandbox = ran.sandbox
	}
	switch {
	case err != nil:
		rec.Reason = "could not decide: " + err.Error()
	case pass:
		rec.Verdict, rec.Reason = facts.VerdictPass, reason
	default:
		rec.Reason = reason
	}
	return rec
}

func spec(name, target string, args any) facts.CheckSpec {
	raw, err := json.Marshal(args)
	if err != nil {
		panic(err) // the built-in args are plain structs
	}
	return facts.CheckSpec{Name: name, Target: target, Args: raw}
}

type fileEqualsArgs struct {
	SHA256 string `json:"sha256"`
	Size   int    `json:"size"`
}

// FileEquals declares that the file at path (relative to the workspace)
// holds exactly content. The spec records the content's digest and size,
// not the content.
func FileEquals(path string, content []byte) facts.CheckSpec {
	sum := sha256.Sum256(content)
	return spec(CheckFileEquals, path, fileEqualsArgs{SHA256: hex.EncodeToString(sum[:]), Size: len(content)})
}

type fileContainsArgs struct {
	Text string `json:"text"`
}

// FileContains declares that the file at path contains text.
func FileContains(path, text string) facts.CheckSpec {
	return spec(CheckFileContains, path, fileContainsArgs{Text: text})
}

type commandArgs struct {
	Argv []string `json:"argv"`
}

// CommandSucceeds declares that argv, run in the workspace, exits 0. It
// runs in the sandbox the action's request recorded, through
// CheckEnv.Commands (see CheckCommands); without one it is not decided.
func CommandSucceeds(argv ...string) facts.CheckSpec {
	return spec(CheckCommandSucceeds, strings.Join(argv, " "), commandArgs{Argv: argv})
}

type onlyPathsArgs struct {
	Paths []string `json:"paths"`
}

// OnlyPathsChanged declares that the action changed no path but these.
func OnlyPathsChanged(paths ...string) facts.CheckSpec {
	return spec(CheckOnlyPathsChanged, strings.Join(paths, ", "), onlyPathsArgs{Paths: paths})
}

func decodeArgs(spec facts.CheckSpec, v any) error {
	dec := json.NewDecoder(bytes.NewReader(spec.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: args: %w", spec.Name, err)
	}
	return nil
}

// ErrNotRegular: a file the runtime reads is not a regular file — a
// directory, a named pipe, a device, a socket — so its content is not a
// file's content: a pipe's read waits for a writer, a device's never ends.
var ErrNotRegular = errors.New("not a regular file")

// regularFlags opens a file to read it. O_NONBLOCK, so that opening a named
// pipe never waits for a writer (the pipe is then refused, as every file
// that is not regular is); it changes nothing for a regular file.
// O_NOCTTY, so that a terminal device never becomes the process's
// controlling terminal by being looked at.
var regularFlags = func() int {
	if runtime.GOOS == "windows" {
		return os.O_RDONLY
	}
	return os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY
}()

// OpenRegular opens name inside r for reading, as os.Root opens it (a
// symlink is followed while it stays beneath the root), and only if it is
// a regular file: it never blocks in open, whatever the name is. Anything
// else is refused with an error that names name and what it is, wraps
// ErrNotRegular, and comes with the FileInfo that says so. A device is
// refused from its metadata, before it is opened; should the name be
// swapped for one between that look and the open, the open does not block
// (O_NONBLOCK) and the file is refused from what was opened. Reads of the
// returned file never block either: it is a regular file. Bound them all
// the same — a regular file can be as large as a disk.
func OpenRegular(r *os.Root, name string) (*os.File, fs.FileInfo, error) {
	info, err := r.Stat(name)
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, info, notRegular(name, info.Mode())
	}
	f, err := r.OpenFile(name, regularFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, info, notRegular(name, info.Mode())
	}
	return f, info, nil
}

func notRegular(name string, m fs.FileMode) error {
	return fmt.Errorf("%s is %s: %w", filepath.ToSlash(name), FileKind(m), ErrNotRegular)
}

// FileKind names the type of a file mode for a person: "a regular file",
// "a directory", "a symlink", "a named pipe (FIFO)", "a character
// device", "a block device", "a socket" or "an irregular file".
func FileKind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symlink"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSocket != 0:
		return "a socket"
	}
	return "an irregular file"
}

// maxScan is the most a check reads of a file whose size it does not know
// in advance (file_contains): a check of a larger file is not decided.
const maxScan = 64 << 20

// openTarget opens the regular file a check targets through an os.Root,
// so neither ".." nor a symlink can lead it outside the workspace, and
// nothing but a regular file is read. The file is nil, with the reason
// the check fails, when the target does not exist or is not a regular
// file; an error means the check cannot be decided.
func openTarget(env CheckEnv, spec facts.CheckSpec) (f *os.File, info fs.FileInfo, reason string, err error) {
	rel := spec.Target
	if rel == "" || filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, nil, "", fmt.Errorf("target %q is not a path inside the workspace", rel)
	}
	r, err := os.OpenRoot(env.Root)
	if err != nil {
		return nil, nil, "", fmt.Errorf("open workspace: %w", err)
	}
	defer r.Close()
	f, info, err = OpenRegular(r, filepath.FromSlash(rel))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, rel + " does not exist", nil
	case errors.Is(err, ErrNotRegular):
		return nil, nil, fmt.Sprintf("%s is %s, not a regular file", rel, FileKind(info.Mode())), nil
	case err != nil:
		return nil, nil, "", err
	}
	return f, info, "", nil
}

func init() {
	RegisterCheck(CheckFileEquals, func(ctx context.Context, spec facts.CheckSpec, env CheckEnv) (bool, string, error) {
		var a fileEqualsArgs
		if err := decodeArgs(spec, &a); err != nil {
			return false, "", err
		}
		if a.Size < 0 {
			return false, "", fmt.Errorf("%s: args: size %d is negative", spec.Name, a.Size)
		}
		f, info, reason, err := openTarget(env, spec)
		if f == nil {
			return false, reason, err
		}
		defer f.Close()
		// At most one byte more than the expected size is read: a larger
		// file fails without being read to its end.
		h := sha256.New()
		n, err := io.Copy(h, io.LimitReader(ctxReader{ctx, f}, int64(a.Size)+1))
		if err != nil {
			return false, "", fmt.Errorf("read %s: %w", spec.Target, err)
		}
		if n > int64(a.Size) {
			return false, fmt.Sprintf("%s holds %d bytes, more than the expected %d", spec.Target, max(n, info.Size()), a.Size), nil
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != a.SHA256 {
			return false, fmt.Sprintf("%s holds %d bytes with sha256 %.12s…, want %d bytes with sha256 %.12s…", spec.Target, n, got, a.Size, a.SHA256), nil
		}
		return true, fmt.Sprintf("%s holds the expected %d bytes", spec.Target, n), nil
	})
	RegisterCheck(CheckFileContains, func(ctx context.Context, spec facts.CheckSpec, env CheckEnv) (bool, string, error) {
		var a fileContainsArgs
		if err := decodeArgs(spec, &a); err != nil {
			return false, "", err
		}
		f, _, reason, err := openTarget(env, spec)
		if f == nil {
			return false, reason, err
		}
		defer f.Close()
		found, read, err := contains(ctxReader{ctx, f}, []byte(a.Text), maxScan)
		switch {
		case err != nil:
			return false, "", fmt.Errorf("read %s: %w", spec.Target, err)
		case found:
			return true, fmt.Sprintf("%s contains %q", spec.Target, a.Text), nil
		case read > maxScan:
			return false, "", fmt.Errorf("%s is larger than the %d MiB a check reads, and %q is not in them", spec.Target, maxScan>>20, a.Text)
		}
		return false, fmt.Sprintf("%s does not contain %q", spec.Target, a.Text), nil
	})
	RegisterCheck(CheckCommandSucceeds, func(ctx context.Context, spec facts.CheckSpec, env CheckEnv) (bool, string, error) {
		var a commandArgs
		if err := decodeArgs(spec, &a); err != nil {
			return false, "", err
		}
		if len(a.Argv) == 0 {
			return false, "", errors.New("command_succeeds: empty argv")
		}
		if env.Commands == nil {
			return false, "", fmt.Errorf("command_succeeds: %w", ErrNoCheckCommands)
		}
		rep, _, err := env.Commands.RunCheck(ctx, a.Argv, env.Sandbox)
		if err != nil {
			return false, "", err
		}
		out := tail([]byte(rep.Stderr + rep.Stdout))
		switch {
		case rep.Status == facts.StatusSucceeded:
			return true, spec.Target + " exited 0", nil
		case rep.ExitCode > 0:
			return false, fmt.Sprintf("%s exited %d: %s", spec.Target, rep.ExitCode, out), nil
		}
		return false, fmt.Sprintf("%s: %s: %s", spec.Target, rep.Error, out), nil
	})
	RegisterCheck(CheckOnlyPathsChanged, func(_ context.Context, spec facts.CheckSpec, env CheckEnv) (bool, string, error) {
		var a onlyPathsArgs
		if err := decodeArgs(spec, &a); err != nil {
			return false, "", err
		}
		if !env.Observed {
			return false, "nothing was observed, so what changed is unknown", nil
		}
		var others []string
		for _, c := range env.Changed {
			if !slices.Contains(a.Paths, c.Path) {
				others = append(others, c.Path)
			}
		}
		if len(others) > 0 {
			return false, "also changed: " + strings.Join(others, ", "), nil
		}
		if len(env.Changed) == 1 {
			return true, "1 changed path, allowed", nil
		}
		return true, fmt.Sprintf("%d changed paths, all allowed", len(env.Changed)), nil
	})
}

// The built-in checks' validators: the args are a JSON object that
// decodes into the check's own (unknown fields refused), and a file
// check's target is a path inside the workspace.
func init() {
	decodeArgs := func(spec facts.CheckSpec, v any) error {
		if a := bytes.TrimSpace(spec.Args); len(a) == 0 || a[0] != '{' {
			return fmt.Errorf("args %.40q: want a JSON object", spec.Args)
		}
		return decodeArgs(spec, v)
	}
	fileTarget := func(spec facts.CheckSpec) error {
		rel := spec.Target
		if rel == "" || filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) {
			return fmt.Errorf("target %q is not a path inside the workspace", rel)
		}
		return nil
	}
	RegisterCheckArgs(CheckFileEquals, func(spec facts.CheckSpec) error {
		var a fileEqualsArgs
		if err := decodeArgs(spec, &a); err != nil {
			return err
		}
		if a.Size < 0 {
			return fmt.Errorf("size %d is negative", a.Size)
		}
		if b, err := hex.DecodeString(a.SHA256); err != nil || len(b) != sha256.Size {
			return fmt.Errorf("sha256 %q is not a hex SHA-256 digest", a.SHA256)
		}
		return fileTarget(spec)
	})
	RegisterCheckArgs(CheckFileContains, func(spec facts.CheckSpec) error {
		var a fileContainsArgs
		if err := decodeArgs(spec, &a); err != nil {
			return err
		}
		return fileTarget(spec)
	})
	RegisterCheckArgs(CheckCommandSucceeds, func(spec facts.CheckSpec) error {
		var a commandArgs
		if err := decodeArgs(spec, &a); err != nil {
			return err
		}
		if len(a.Argv) == 0 || a.Argv[0] == "" {
			return errors.New("empty argv")
		}
		return nil
	})
	RegisterCheckArgs(CheckOnlyPathsChanged, func(spec facts.CheckSpec) error {
		var a onlyPathsArgs
		return decodeArgs(spec, &a)
	})
}

// contains reports whether text occurs in what r yields, reading at most
// limit+1 bytes (read says how many were read) and holding no more than a
// chunk and len(text) of them at once.
func contains(r io.Reader, text []byte, limit int64) (found bool, read int64, err error) {
	if len(text) == 0 {
		return true, 0, nil
	}
	lr := &io.LimitedReader{R: r, N: limit + 1}
	buf := make([]byte, 0, 64<<10+len(text))
	for {
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		read += int64(n)
		if bytes.Contains(buf, text) {
			return true, read, nil
		}
		if errors.Is(err, io.EOF) {
			return false, read, nil
		}
		if err != nil {
			return false, read, err
		}
		if keep := len(text) - 1; len(buf) > keep {
			buf = append(buf[:0], buf[len(buf)-keep:]...)
		}
	}
}

// ctxReader stops reading when its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// tail returns the last line or so of a command's output, for a reason.
func tail(out []byte) string {
	s := strings.TrimSpace(string(out))
	if len(s) > 200 {
		s = "…" + s[len(s)-200:]
	}
	return s
}
