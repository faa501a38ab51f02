package tools_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// fds maps each open file descriptor of pid to what it is open on.
func fds(t *testing.T, pid int) map[int]string {
	t.Helper()
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := make(map[int]string, len(entries))
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		require.NoError(t, err)
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if errors.Is(err, os.ErrNotExist) {
			continue // closed since: the directory's own, when pid is the test
		}
		require.NoError(t, err)
		out[fd] = target
	}
	return out
}

// holders lists the file descriptors of files that are open on target.
func holders(files map[int]string, target string) []int {
	var out []int
	for fd, t := range files {
		if t == target {
			out = append(out, fd)
		}
	}
	return out
}

// The watcher holds /dev/null and the read end of its lifeline, not the
// command's output pipes, which then close when the command's processes
// end; the command does not hold the lifeline, whose end of file would
// otherwise wait for the command too; the harness holds its write end
// alone. (Beside them, the shells may hold descriptors of their own, and
// what the test binary inherited without close-on-exec.)
// (Unsandboxed: mode off.)
func TestRunCommandWatcherFiles(t *testing.T) {
	sh, open := gatedCall(t, `echo "$x"`)
	watcher, shell, harness := fds(t, pgid(t, sh)), fds(t, sh), fds(t, os.Getpid())
	lifeline := watcher[3]
	require.Regexp(t, `^pipe:\[\d+\]$`, lifeline)
	for fd := range 3 {
		// dash and bash read from fd 0, made a copy of fd 3 for the read.
		require.Contains(t, []string{"/dev/null", lifeline}, watcher[fd], "the watcher's fd %d", fd)
	}
	for fd := 1; fd <= 2; fd++ {
		require.Regexp(t, `^pipe:\[\d+\]$`, shell[fd], "the shell's fd %d is a pipe", fd)
		require.Empty(t, holders(watcher, shell[fd]), "the watcher holds the command's fd %d", fd)
	}
	require.Empty(t, holders(shell, lifeline), "the shell holds the lifeline")
	require.Len(t, holders(harness, lifeline), 1, "the harness holds the lifeline's write end, once")

	rep := open("done")
	require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
	require.Equal(t, "done\n", rep.Stdout)
	require.Empty(t, holders(fds(t, os.Getpid()), lifeline), "the harness closed the lifeline")
}

// A call leaves no file descriptor open in the harness: not the lifeline,
// the output pipes, nor the pidfds of the shell and the watcher (or,
// sandboxed, of the helper, its lifeline, request and status pipes).
func TestRunCommandLeavesNoFiles(t *testing.T) {
	for _, sb := range sandboxes {
		t.Run(sb.name, func(t *testing.T) {
			s, _ := workspace(t, nil, sb.opts...)
			call(t, s, tools.RunCommand, `{"command": "true"}`) // the runtime's own, opened once
			before := fds(t, os.Getpid())
			for _, command := range []string{"echo hi", "exit 3", "sleep 30 & echo started", "kill -9 $$"} {
				call(t, s, tools.RunCommand, js(t, map[string]string{"command": command}))
			}
			call(t, s, tools.RunCommand, `{"command": "sleep 5", "timeout_seconds": 0.1}`)
			require.Equal(t, before, fds(t, os.Getpid()))
		})
	}
}
