package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// running lists the processes (not zombies) whose command line holds arg.
func running(arg string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && !strings.Contains(string(stat), ") Z ") && slices.Contains(strings.Split(string(cmdline), "\x00"), arg) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// personGit runs the person's git in dir, outside any sandbox, and
// returns its output; it need not succeed.
func personGit(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// A sandboxed command can make a commondir in the workspace's .git (and
// in a nested repository's, as a link to a file), naming a copy of the repository whose config
// sets core.fsmonitor: Landlock grants rights per directory, and .git
// stays writable. After the command, before the runtime observes, the
// runtime removes both and records it; the person's git status, in the
// workspace and in the nested repository, then runs nothing. The control
// at the end plants the same commondir again by hand: git status runs
// the program, so what was removed would have run.
func TestACommondirACommandPlantsIsRemovedBeforeThePersonsGit(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	s, root := sandboxRepo(t)
	git(t, root, "init", "-q", "nested")
	ws, err := action.NewWorkspace(root)
	require.NoError(t, err)
	defer ws.Close()
	b := &action.Boundary{Observer: ws, Granted: []action.Capability{action.Execute}, Root: root}
	run, ok := s.Lookup(tools.RunCommand)
	require.True(t, ok)
	rec := s.Sandbox().Record()

	pwned, pwnedNested := filepath.Join(root, "PWNED"), filepath.Join(root, "nested", "PWNED")
	// A process the command leaves behind, planting again and again: the
	// sandbox ends it with the command (its PID namespace), before the
	// runtime removes anything.
	loopMark := fmt.Sprintf("plant-loop-%d-%d", os.Getpid(), time.Now().UnixNano())
	command := `set -e
cp -r .git evil
printf '[core]\n\tfsmonitor = "touch ` + pwned + `; false"\n' >> evil/config
cp -r nested/.git evil-nested
printf '[core]\n\tfsmonitor = "touch ` + pwnedNested + `; false"\n' >> evil-nested/config
echo ../evil > .git/commondir
(setsid sh -c 'while :; do echo ../evil > .git/commondir; sleep 0.01; done' ` + loopMark + ` &)
echo ../../evil-nested > nested-commondir
ln -s ../../nested-commondir nested/.git/commondir
echo planted`
	payload, err := json.Marshal(map[string]string{"command": command})
	require.NoError(t, err)
	req := action.Request{ActionID: "a1", Capability: action.Execute, Adapter: tools.RunCommand, Payload: payload, Sandbox: &rec}
	bg, refused := b.Begin(context.Background(), req)
	require.Nil(t, refused)
	c := b.Finish(context.Background(), req, bg, run).Completed
	require.NotNil(t, c)
	require.Equal(t, facts.StatusSucceeded, c.Report.Status, "the command could plant them: %s", c.Report.Stderr)
	require.Contains(t, c.Report.Stdout, "planted")

	require.Len(t, c.Observation.Removed, 2, "%+v", c.Observation.Removed)
	byPath := map[string]facts.Removal{}
	for _, r := range c.Observation.Removed {
		require.Empty(t, r.Error)
		byPath[r.Path] = r
	}
	require.Equal(t, "a regular file", byPath[".git/commondir"].Kind)
	require.Equal(t, "../evil", byPath[".git/commondir"].Names)
	require.Equal(t, "a symlink", byPath["nested/.git/commondir"].Kind)
	require.Equal(t, "../../nested-commondir", byPath["nested/.git/commondir"].Names)
	require.Equal(t, facts.EffectObserved, c.EffectState)
	for _, p := range c.Observation.Changed {
		require.NotContains(t, []string{".git/commondir", "nested/.git/commondir"}, p.Path, "a removed commondir is not in the reading after")
	}
	require.NoError(t, c.Validate())

	require.Empty(t, running(loopMark), "a process of the command outlived it")
	for _, d := range []string{root, filepath.Join(root, "nested")} {
		_, err := os.Lstat(filepath.Join(d, ".git", "commondir"))
		require.ErrorIs(t, err, os.ErrNotExist)
		personGit(d, "status")
	}
	for _, p := range []string{pwned, pwnedNested} {
		_, err := os.Lstat(p)
		require.ErrorIs(t, err, os.ErrNotExist, "the person's git status ran the command's fsmonitor")
	}

	// The control: what was removed would have run.
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "commondir"), []byte("../evil\n"), 0o644))
	personGit(root, "status")
	require.FileExists(t, pwned, "the planted commondir does not work in this git: the test proves nothing")
	require.NoError(t, os.Symlink("../../nested-commondir", filepath.Join(root, "nested", ".git", "commondir")))
	personGit(filepath.Join(root, "nested"), "status")
	require.FileExists(t, pwnedNested, "the planted link does not work in this git: the test proves nothing")
}
