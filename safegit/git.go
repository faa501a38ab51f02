package safegit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// callLimit bounds each git call Run makes and each config read of
// driverKeys: a repository's git directory is the workspace's, which a
// command may fill with FIFOs where git reads files (HEAD, packed-refs, a
// ref), and git opening one waits for a writer that never comes. Ten
// minutes is far more than any of these calls takes on a large
// repository (git worktree add checks out the whole tree).
var callLimit = 10 * time.Minute

// safeConfig is what every call sets on its command line, where it
// overrides every config file: nothing a repository's config (or a config
// it includes, or one a planted commondir leads to) names runs. No
// fsmonitor, no hook, no pager, no editor, no signing program; no
// transport at all (so no ssh command, proxy, askpass or credential
// helper); submodules are not entered (their configs are their own); no
// background gc (gc.auto) and no maintenance. Filters and merge drivers
// are emptied by name (Command).
var safeConfig = []string{
	"core.fsmonitor=false",
	"core.hooksPath=/dev/null",
	"core.pager=cat",
	"core.editor=false",
	"sequence.editor=false",
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"protocol.allow=never",
	"submodule.recurse=false",
	"diff.ignoreSubmodules=all",
	"status.submoduleSummary=false",
	"gc.auto=0",
	"maintenance.auto=false",
	"core.splitIndex=false",
	"core.untrackedCache=false",
}

// diffing are the subcommands that can run an external diff or a textconv
// program: Command adds --no-ext-diff and --no-textconv.
var diffing = map[string]bool{"diff": true, "log": true, "show": true}

// Command is the one way the harness runs git itself: git with args in
// dir, such that repository configuration that runs programs does not —
// core.fsmonitor, core.hooksPath and the hooks, core.pager, the editors,
// core.sshCommand and every transport, diff.external and textconv, the
// clean, smudge and process commands of every filter and the driver of
// every merge driver the repository declares. The environment is the
// harness's without any GIT_* variable (GIT_DIR, GIT_EXTERNAL_DIFF,
// GIT_SSH_COMMAND, GIT_CONFIG_PARAMETERS …), with GIT_CONFIG_NOSYSTEM and
// no terminal prompt.
//
// It fails with ErrUnsafe when a filter's or merge driver's name holds
// "=", which "-c" cannot name.
func Command(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	return CommandEnv(ctx, dir, nil, args...)
}

// CommandEnv is Command with more environment (GIT_DIR and
// GIT_WORK_TREE, an identity): the config whose drivers are switched off
// is the one git will read with it. The repository's git directory —
// the one GIT_DIR names, or the one found from dir — must not be led
// elsewhere by a planted commondir (ErrUnsafe): only a linked worktree's
// git directory names one, and it must be the repository's own.
func CommandEnv(ctx context.Context, dir string, extra []string, args ...string) (*exec.Cmd, error) {
	env := append(Env(), extra...)
	if err := checkGitDir(dir, extra); err != nil {
		return nil, err
	}
	var full []string
	for _, c := range safeConfig {
		full = append(full, "-c", c)
	}
	keys, err := driverKeys(ctx, dir, env)
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		if strings.Contains(key, "=") {
			return nil, fmt.Errorf("git in %s: the repository's config declares a driver named %q, which cannot be switched off: %w", dir, key, ErrUnsafe)
		}
		full = append(full, "-c", key+"=")
	}
	if len(args) > 0 && diffing[args[0]] {
		args = append([]string{args[0], "--no-ext-diff", "--no-textconv"}, args[1:]...)
	}
	cmd := exec.CommandContext(ctx, "git", append(full, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd, nil
}

// Run runs Command(ctx, dir, args...) and returns its standard output; a
// failure's error carries what git said on its standard error.
//
// A call that does not finish in callLimit is killed: ErrStalled.
func Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	limited, cancel := context.WithTimeoutCause(ctx, callLimit, ErrStalled)
	defer cancel()
	cmd, err := Command(limited, dir, args...)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() == nil && errors.Is(context.Cause(limited), ErrStalled) {
		return out, fmt.Errorf("git %s in %s: %w (it did not finish in %v)", strings.Join(args, " "), dir, ErrStalled, callLimit)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		return out, fmt.Errorf("git %s in %s: %w: %s", strings.Join(args, " "), dir, err, msg)
	}
	return out, nil
}

// Env is the environment of the harness's git calls: its own without any
// GIT_* variable, with no system config and no terminal prompt.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	// GIT_ALLOW_PROTOCOL overrides every protocol.<name>.allow a
	// repository's config sets (protocol.allow=never alone does not): a
	// name no transport has allows none, so a promisor remote of a
	// partial clone (ext::sh -c …) is never fetched from.
	// GIT_NO_LAZY_FETCH (git 2.44 and later) does not even try.
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0", "GIT_ALLOW_PROTOCOL=harness-none", "GIT_NO_LAZY_FETCH=1")
}

// checkGitDir refuses a git directory a planted commondir file leads
// elsewhere: the git directory GIT_DIR names in extra, or else the .git
// found from dir upward. A commondir that names the git directory itself
// leads nowhere else; any other is refused but a linked worktree's: a
// .git file's git directory <git>/worktrees/<name> names the
// repository's git directory two levels up.
func checkGitDir(dir string, extra []string) error {
	gitDir := ""
	for _, kv := range extra {
		if v, ok := strings.CutPrefix(kv, "GIT_DIR="); ok {
			gitDir = v
		}
	}
	if gitDir == "" {
		d, err := filepath.Abs(dir)
		if err != nil {
			return nil
		}
		for {
			p := filepath.Join(d, ".git")
			if fi, err := os.Lstat(p); err == nil {
				if fi.IsDir() {
					gitDir = p
				} else if b, err := readControl(p); err != nil {
					return fmt.Errorf("git in %s: %w", dir, err)
				} else {
					g := strings.TrimSpace(strings.TrimPrefix(string(b), "gitdir:"))
					if !filepath.IsAbs(g) {
						g = filepath.Join(d, g)
					}
					gitDir = g
				}
				break
			}
			up := filepath.Dir(d)
			if up == d {
				return nil // no repository: git says so itself
			}
			d = up
		}
	}
	if err := headIsFile(gitDir); err != nil {
		return fmt.Errorf("git in %s: %w", dir, err)
	}
	b, err := readControl(filepath.Join(gitDir, "commondir"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // none: the git directory is its own
	}
	if err != nil {
		return fmt.Errorf("git in %s: %w", dir, err)
	}
	common := strings.TrimSpace(string(b))
	if !filepath.IsAbs(common) {
		common = filepath.Join(gitDir, common)
	}
	if filepath.Clean(common) == filepath.Clean(gitDir) {
		return nil // the git directory itself: nowhere else
	}
	want := filepath.Dir(filepath.Dir(filepath.Clean(gitDir)))
	if filepath.Base(filepath.Dir(filepath.Clean(gitDir))) != "worktrees" || filepath.Clean(common) != want {
		return fmt.Errorf("git in %s: the git directory %s names another as its common directory (%s): %w", dir, gitDir, common, ErrUnsafe)
	}
	return nil
}

// maxControl bounds what readControl reads: a .git file or a commondir
// is one line.
const maxControl = 64 << 10

// readControl reads one of git's small control files (a .git file, a
// commondir) as git would, but never waits: anything but a regular file
// (a FIFO, a device, a directory) is ErrStalled; a missing one is
// fs.ErrNotExist.
func readControl(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is a %s, not a file: %w", p, kindOf(fi.Mode()), ErrStalled)
	}
	return io.ReadAll(io.LimitReader(f, maxControl))
}

// headIsFile refuses a git directory whose HEAD is neither a file nor a
// symbolic link (git's old symref): git reads HEAD before anything else,
// and a FIFO there holds every git call.
func headIsFile(gitDir string) error {
	fi, err := os.Lstat(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return nil // git says what is wrong itself
	}
	if m := fi.Mode(); !m.IsRegular() && m&fs.ModeSymlink == 0 {
		return fmt.Errorf("%s is a %s, not a file: %w", filepath.Join(gitDir, "HEAD"), kindOf(m), ErrStalled)
	}
	return nil
}

// kindOf names the kind of file m is, for an error.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "special file"
}

// driverKeys returns the keys of the program-running commands of the
// filters and merge drivers that any configuration git may read in dir
// declares (filter.<driver>.clean, .smudge, .process and .required;
// merge.<driver>.driver), to be emptied on the command line.
//
// What git config reads in dir is not all that the git call may read: an
// includeIf holds only in some places ("gitdir:**/worktrees/**", "onbranch:
// harness/**"), and the call may run where it holds — git worktree add
// checks out in the new worktree, on its new branch. So every file an
// include or includeIf names, whether or not its condition holds here, is
// read too, and the files those name, up to maxConfigFiles (more is
// ErrUnsafe). git config only reads files; it runs nothing.
func driverKeys(ctx context.Context, dir string, env []string) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("git in %s: %w", dir, err)
	}
	var keys []string
	seen := map[string]bool{}
	add := func(k string) {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	read := map[string]bool{}
	var queue []string
	entries := func(file string) error {
		args := []string{"-c", "core.fsmonitor=false", "config", "--null", "--show-origin"}
		if file != "" {
			args = append(args, "--no-includes", "--file", file)
		}
		limited, cancel := context.WithTimeoutCause(ctx, callLimit, ErrStalled)
		defer cancel()
		cmd := exec.CommandContext(limited, "git", append(args, "--get-regexp", configKeys)...)
		cmd.Dir = dir
		cmd.Env = env
		out, err := cmd.Output()
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if errors.Is(context.Cause(limited), ErrStalled) {
			// Not "none declared": what it would have said is not known.
			return fmt.Errorf("git config in %s: %w (it did not finish in %v)", dir, ErrStalled, callLimit)
		}
		if err != nil {
			return nil // none declared (exit 1), no git config to read, or no such file
		}
		for _, e := range configEntries(out) {
			origin, key, value := e.origin, e.key, e.value
			lower := strings.ToLower(key)
			if strings.HasPrefix(lower, "include") {
				// include.path is followed by git config itself in dir,
				// but not with --file; an includeIf, only where it holds.
				if file == "" && !strings.HasPrefix(lower, "includeif.") {
					continue
				}
				for _, p := range includePaths(abs, origin, value) {
					if !read[p] {
						read[p] = true
						queue = append(queue, p)
					}
				}
				continue
			}
			i, j := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
			if i == j {
				continue // filter.x or merge.renormalize: no driver
			}
			driver := key[:j]
			if strings.HasPrefix(lower, "merge.") {
				add(driver + ".driver")
				continue
			}
			for _, what := range []string{"clean", "smudge", "process", "required"} {
				add(driver + "." + what)
			}
		}
		return nil
	}
	if err := entries(""); err != nil {
		return nil, err
	}
	for n := 0; len(queue) > 0; n++ {
		if n == maxConfigFiles {
			return nil, fmt.Errorf("git in %s: the repository's config includes more than %d files: %w", dir, maxConfigFiles, ErrUnsafe)
		}
		f := queue[0]
		queue = queue[1:]
		if err := entries(f); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// configKeys are the keys driverKeys asks git config for: the drivers,
// and the includes.
const configKeys = `^(filter|merge)\.|^include(if\..*)?\.path$`

// maxConfigFiles bounds the files driverKeys reads besides what git
// config reads in the directory (git itself follows includes 10 deep).
const maxConfigFiles = 64

// configEntry is one entry of git config's output.
type configEntry struct{ origin, key, value string }

// configEntries parses the output of git config --null --show-origin
// --get-regexp: "file:PATH", NUL, the key, newline, the value, NUL (a key
// with no value has no newline).
func configEntries(out []byte) []configEntry {
	var es []configEntry
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		key, value, _ := strings.Cut(string(fields[i+1]), "\n")
		es = append(es, configEntry{origin: string(fields[i]), key: strings.TrimSpace(key), value: value})
	}
	return es
}

// includePaths are the files an include's path may name, as git resolves
// it: a leading "~/" is the home directory and "~user/" that user's, a
// relative path is relative to the directory of the file that holds the
// include (origin). git gives an origin relative to the directory it
// works in, which is dir or, found from a subdirectory, the top of the
// repository: each directory from dir up whose join with it is a file
// is taken. None for what names no file driverKeys can read (a relative
// path given on the command line, "%(prefix)/", an empty value).
func includePaths(dir, origin, value string) []string {
	value = strings.TrimSpace(value)
	switch {
	case value == "" || strings.HasPrefix(value, "%(prefix)/"):
		return nil
	case strings.HasPrefix(value, "~"):
		p, ok := ExpandHome(value)
		if !ok {
			return nil
		}
		return []string{p}
	case filepath.IsAbs(value):
		return []string{filepath.Clean(value)}
	}
	from, ok := strings.CutPrefix(origin, "file:")
	if !ok || from == "" {
		return nil
	}
	if filepath.IsAbs(from) {
		return []string{filepath.Join(filepath.Dir(from), value)}
	}
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Stat(filepath.Join(d, from)); err == nil && fi.Mode().IsRegular() {
			out = append(out, filepath.Join(filepath.Dir(filepath.Join(d, from)), value))
		}
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// ExpandHome expands a leading "~" in a path value of git's config
// (core.hooksPath, include.path) as git does: "~" and "~/…" are the home
// directory ($HOME), "~user" and "~user/…" that user's home from the
// system's user database (the person's own name too). It returns value as
// it is when it does not start with "~", and false when the home it names
// is unknown (no $HOME, no such user): git then names no path.
func ExpandHome(value string) (string, bool) {
	if !strings.HasPrefix(value, "~") {
		return value, true
	}
	name, rest, _ := strings.Cut(value[1:], "/")
	home := ""
	if name == "" {
		home, _ = os.UserHomeDir()
	} else if u, err := user.Lookup(name); err == nil {
		home = u.HomeDir
	}
	if home == "" {
		return "", false
	}
	return filepath.Join(home, rest), true
}
