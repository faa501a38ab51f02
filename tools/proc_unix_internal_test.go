//go:build unix

package tools

import (
	"errors"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// watcherShells are the shells the watcher script is tried with: /bin/sh,
// and dash and bash where they are installed.
func watcherShells(t *testing.T) []string {
	shells := []string{watcherShell}
	for _, name := range []string{"dash", "bash"} {
		if path, err := exec.LookPath(name); err == nil {
			shells = append(shells, path)
		}
	}
	return shells
}

// exited returns a channel closed with the error of cmd's Wait.
func exited(cmd *exec.Cmd) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- cmd.Wait() }()
	return ch
}

// killedBy requires that a process ended, within a few seconds, by sig.
func killedBy(t *testing.T, what string, ch <-chan error, sig syscall.Signal) {
	t.Helper()
	select {
	case err := <-ch:
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, what)
		ws, ok := exit.Sys().(syscall.WaitStatus)
		require.True(t, ok)
		require.True(t, ws.Signaled(), "%s: %v", what, err)
		require.Equal(t, sig, ws.Signal(), what)
	case <-time.After(5 * time.Second):
		t.Fatalf("%s is still running", what)
	}
}

// The watcher survives the signals a command may send its own group, and
// kills the group — a member and itself — when the lifeline closes.
func TestWatcherKillsTheGroupAtEOF(t *testing.T) {
	for _, sh := range watcherShells(t) {
		t.Run(sh, func(t *testing.T) {
			watcher, lifeline, err := startWatcher(sh)
			require.NoError(t, err)
			pgid := watcher.Process.Pid
			t.Cleanup(func() {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				lifeline.Close()
			})
			watcherDone := exited(watcher)
			member := func() <-chan error {
				sleep := exec.Command("sleep", "30")
				sleep.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
				require.NoError(t, sleep.Start())
				return exited(sleep)
			}

			for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGUSR1} {
				if signal.Ignored(sig) {
					// Ignored here (the tests run under nohup, say), and so
					// in the sleep this process starts: it would not end.
					continue
				}
				sleep := member()
				require.NoError(t, syscall.Kill(-pgid, sig))
				killedBy(t, "a sleep in the group", sleep, sig)
				select {
				case err := <-watcherDone:
					t.Fatalf("the watcher ended by %v: %v", sig, err)
				case <-time.After(50 * time.Millisecond):
				}
			}

			// Stop signals (a command reading the terminal stops its whole
			// group with SIGTTIN) do not stop the watcher: it still kills
			// the group at the lifeline's end.
			for _, sig := range []syscall.Signal{syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU} {
				require.NoError(t, syscall.Kill(-pgid, sig))
			}
			time.Sleep(50 * time.Millisecond)
			sleep := member()
			require.NoError(t, lifeline.Close())
			killedBy(t, "the sleep", sleep, syscall.SIGKILL)
			killedBy(t, "the watcher", watcherDone, syscall.SIGKILL)
		})
	}
}

// A watcher that cannot start fails the start: the command is not run.
func TestStartWatchedWithoutWatcher(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "echo ran")
	g, err := startWatched("/nonexistent/sh", cmd)
	require.Nil(t, g)
	require.ErrorContains(t, err, "start the process-group watcher /nonexistent/sh: ")
	require.ErrorIs(t, err, syscall.ENOENT)
	require.Nil(t, cmd.Process, "the command was started unwatched")
}

// A command that cannot start leaves no watcher behind.
func TestStartWatchedCommandFails(t *testing.T) {
	cmd := exec.Command("/nonexistent/command")
	g, err := startWatched(watcherShell, cmd)
	require.Nil(t, g)
	require.ErrorContains(t, err, "start /nonexistent/command in the group of watcher ")
	require.ErrorIs(t, err, syscall.ENOENT)
	watcher := cmd.SysProcAttr.Pgid
	require.NotZero(t, watcher)
	require.True(t, errors.Is(syscall.Kill(watcher, 0), syscall.ESRCH), "the watcher %d was left behind", watcher)
}

// A watcher that does not say ready — here a program that ignores the
// script and exits — fails the start, and is reaped.
func TestStartWatcherNotReady(t *testing.T) {
	notSh, err := exec.LookPath("true")
	require.NoError(t, err)
	watcher, lifeline, err := startWatcher(notSh)
	require.Nil(t, watcher)
	require.Nil(t, lifeline)
	require.ErrorContains(t, err, "start the process-group watcher "+notSh+`: it said "", not "ready"`)
}
