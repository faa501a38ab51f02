package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// gitSafeConfig is what every git call of the harness's own sets on its
// command line, where it overrides every config file: nothing a
// repository's config (or a config it includes, or one a planted commondir
// leads to) names runs. No fsmonitor, no hook, no pager, no editor, no
// signing program; no transport at all (so no ssh command, proxy, askpass
// or credential helper); submodules are not entered (their configs are
// their own). Filters are emptied by name (gitCommand).
var gitSafeConfig = []string{
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
}

// gitDiffing are the subcommands that can run an external diff or a
// textconv program: gitCommand adds --no-ext-diff and --no-textconv.
var gitDiffing = map[string]bool{"diff": true, "log": true, "show": true}

// gitCommand is the one way the harness runs git itself: git with args in
// dir, such that repository configuration that runs programs does not —
// core.fsmonitor, core.hooksPath and the hooks, core.pager, the editors,
// core.sshCommand and every transport, diff.external and textconv, and the
// clean, smudge and process commands of every filter the repository
// declares. The environment is the harness's without any GIT_* variable
// (GIT_DIR, GIT_EXTERNAL_DIFF, GIT_SSH_COMMAND, GIT_CONFIG_PARAMETERS …),
// with GIT_CONFIG_NOSYSTEM and no terminal prompt. A repository is
// untrusted input: a command may have planted its config (see issue 21).
//
// It fails when a filter's name holds "=", which "-c" cannot name.
func gitCommand(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
	var full []string
	for _, c := range gitSafeConfig {
		full = append(full, "-c", c)
	}
	for _, key := range gitFilterKeys(ctx, dir, env) {
		if strings.Contains(key, "=") {
			return nil, fmt.Errorf("git in %s: the repository's config declares a filter named %q, which cannot be switched off: %w", dir, key, errUnsafeGit)
		}
		full = append(full, "-c", key+"=")
	}
	if len(args) > 0 && gitDiffing[args[0]] {
		args = append([]string{args[0], "--no-ext-diff", "--no-textconv"}, args[1:]...)
	}
	cmd := exec.CommandContext(ctx, "git", append(full, args...)...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd, nil
}

// errUnsafeGit: a repository's config that gitCommand cannot make safe.
var errUnsafeGit = errors.New("repository config that would run a program")

// gitFilterKeys returns the keys of the filter commands the configuration
// git reads in dir declares (filter.<driver>.clean, .smudge, .process),
// and .required of each driver, to be emptied on the command line. git
// config only reads files; it runs nothing.
func gitFilterKeys(ctx context.Context, dir string, env []string) []string {
	cmd := exec.CommandContext(ctx, "git", "-c", "core.fsmonitor=false", "config", "--null", "--name-only", "--get-regexp", `^filter\.`)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return nil // none declared (exit 1), or no git config to read
	}
	var keys []string
	seen := map[string]bool{}
	for key := range bytes.SplitSeq(out, []byte{0}) {
		k := strings.TrimSpace(string(key))
		i, j := strings.IndexByte(k, '.'), strings.LastIndexByte(k, '.')
		if k == "" || i == j {
			continue
		}
		driver := k[:j]
		for _, what := range []string{"clean", "smudge", "process"} {
			if !seen[driver+"."+what] {
				seen[driver+"."+what] = true
				keys = append(keys, driver+"."+what)
			}
		}
		if !seen[driver+".required"] {
			seen[driver+".required"] = true
			keys = append(keys, driver+".required")
		}
	}
	return keys
}
