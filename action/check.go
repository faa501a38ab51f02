package action

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

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
// the observer saw change.
type CheckEnv struct {
	// Root is the workspace directory paths are relative to.
	Root string
	// Changed is the observed inventory of the action; nil when nothing
	// could be observed.
	Changed []facts.PathChange
	// Observed is false when no observation was possible.
	Observed bool
}

// CheckFunc decides a check. A returned error means the check could not be
// decided (it is recorded as a fail with the error as the reason).
type CheckFunc func(ctx context.Context, spec facts.CheckSpec, env CheckEnv) (pass bool, reason string, err error)

var (
	checksMu sync.RWMutex
	checks   = map[string]CheckFunc{}
)

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

// Decide runs the check a spec declares and returns its record.
func Decide(ctx context.Context, actionID string, spec facts.CheckSpec, env CheckEnv) facts.CheckRecorded {
	rec := facts.CheckRecorded{ActionID: actionID, Check: spec, Verdict: facts.VerdictFail}
	checksMu.RLock()
	f := checks[spec.Name]
	checksMu.RUnlock()
	if f == nil {
		rec.Reason = fmt.Sprintf("%s: %v", spec.Name, ErrUnknownCheck)
		return rec
	}
	pass, reason, err := f(ctx, spec, env)
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

// CommandSucceeds declares that argv, run in the workspace, exits 0.
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

// readTarget reads the file a check targets through an os.Root, so neither
// ".." nor a symlink can lead it outside the workspace.
func readTarget(root, rel string) ([]byte, error) {
	if rel == "" || filepath.IsAbs(rel) || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return nil, fmt.Errorf("target %q is not a path inside the workspace", rel)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	defer r.Close()
	return r.ReadFile(filepath.FromSlash(rel))
}

// onTarget reads a check's target and decides with judge; a target that
// does not exist fails the check.
func onTarget(env CheckEnv, spec facts.CheckSpec, judge func(data []byte) (bool, string)) (bool, string, error) {
	data, err := readTarget(env.Root, spec.Target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, spec.Target + " does not exist", nil
	case err != nil:
		return false, "", err
	}
	pass, reason := judge(data)
	return pass, reason, nil
}

func init() {
	RegisterCheck(CheckFileEquals, func(_ context.Context, spec facts.CheckSpec, env CheckEnv) (bool, string, error) {
		var a fileEqualsArgs
		if err := decodeArgs(spec, &a); err != nil {
			return false, "", err
		}
		return onTarget(env, spec, func(data []byte) (bool, string) {
			sum := sha256.Sum256(data)
			if got := hex.EncodeToString(sum[:]); got != a.SHA256 {
				return false, fmt.Sprintf("%s holds %d bytes with sha256 %.12s…, want %d bytes with sha256 %.12s…", spec.Target, len(data), got, a.Size, a.SHA256)
			}
			return true, fmt.Sprintf("%s holds the expected %d bytes", spec.Target, len(data))
		})
	})
	RegisterCheck(CheckFileContains, func(_ context.Context, spec facts.CheckSpec, env CheckEnv) (bool, string, error) {
		var a fileContainsArgs
		if err := decodeArgs(spec, &a); err != nil {
			return false, "", err
		}
		return onTarget(env, spec, func(data []byte) (bool, string) {
			if !bytes.Contains(data, []byte(a.Text)) {
				return false, fmt.Sprintf("%s does not contain %q", spec.Target, a.Text)
			}
			return true, fmt.Sprintf("%s contains %q", spec.Target, a.Text)
		})
	})
	RegisterCheck(CheckCommandSucceeds, func(ctx context.Context, spec facts.CheckSpec, env CheckEnv) (bool, string, error) {
		var a commandArgs
		if err := decodeArgs(spec, &a); err != nil {
			return false, "", err
		}
		if len(a.Argv) == 0 {
			return false, "", errors.New("command_succeeds: empty argv")
		}
		cmd := exec.CommandContext(ctx, a.Argv[0], a.Argv[1:]...)
		cmd.Dir = env.Root
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			return false, fmt.Sprintf("%s exited %d: %s", spec.Target, exit.ExitCode(), tail(out)), nil
		case err != nil:
			return false, "", err
		}
		return true, spec.Target + " exited 0", nil
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
		return true, fmt.Sprintf("%d changed paths, all allowed", len(env.Changed)), nil
	})
}

// tail returns the last line or so of a command's output, for a reason.
func tail(out []byte) string {
	s := strings.TrimSpace(string(out))
	if len(s) > 200 {
		s = "…" + s[len(s)-200:]
	}
	return s
}
