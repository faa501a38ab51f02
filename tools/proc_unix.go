//go:build unix

package tools

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// shell is the argv that runs a command line.
func shell(command string) []string { return []string{"/bin/sh", "-c", command} }

// watcherShell runs watcherScript.
const watcherShell = "/bin/sh"

// watcherScript is what a process group's watcher runs. It waits on fd 3,
// the read end of its lifeline pipe, until the read returns — at end of
// file, which comes only when the harness's write end is closed — and then
// kills its process group with SIGKILL, itself included. Nothing is ever
// written to the lifeline.
//
// The trap ignores the signals that end a shell by default and that a
// command can send its own group ("kill 0", "kill -HUP 0", …), so that
// the watcher survives them and still covers the harness's death; and the
// ones that stop it (TSTP, TTIN, TTOU: a command reading the terminal
// stops its whole group), so that a stopped watcher never misses the end
// of its lifeline. Ignored signals do not interrupt the read either. SIGKILL, which the harness
// uses, cannot be ignored. Once the trap is set the watcher says "ready"
// on its stdout, a pipe of its own, and puts /dev/null in its place: the
// harness starts the command only then, so a command that signals its
// group at once does not find the watcher without its trap.
//
// read, trap, echo and kill are builtins in every POSIX shell (dash and
// bash among them), so the watcher needs no PATH.
const watcherScript = `trap '' HUP INT QUIT PIPE ALRM TERM USR1 USR2 TSTP TTIN TTOU; echo ready; exec >/dev/null; read -r line <&3; kill -s KILL 0`

// watcherReadyTimeout bounds the wait for a started watcher to say ready.
const watcherReadyTimeout = 10 * time.Second

// processGroup is the process group a command runs in. Its leader is a
// watcher (see startCommand), so the group id is the watcher's pid; the
// harness reaps the watcher only in release, so that id cannot be reused
// while the group may be signalled.
type processGroup struct {
	watcher  *exec.Cmd
	lifeline *os.File    // the write end of the watcher's fd 3
	unlock   func()      // from startShell, once the shell is started
	shell    *os.Process // the command's shell, once started
}

// startCommand starts cmd, a shell, in a new process group led by a
// watcher: a tiny /bin/sh (watcherScript) started first, as the leader of
// the group, with the read end of a pipe — its lifeline — as fd 3. The
// harness keeps the write end, and it alone: os.Pipe makes both ends
// close-on-exec atomically (pipe2 with O_CLOEXEC; on macOS and AIX under
// syscall.ForkLock, which every fork of package syscall takes), so no
// other process the harness starts — this command's shell, a concurrent
// command's, anything else — inherits it, and the watcher gets only the
// read end, through ExtraFiles. cmd then starts in the watcher's group
// (Setpgid with Pgid), so everything it starts is in that group too
// unless it leaves.
//
// However the harness ends — even by SIGKILL or the OOM killer, which
// leave it no chance to kill the group itself — the kernel closes its
// file descriptors, the lifeline among them; the watcher's read returns
// at end of file, and "kill -s KILL 0" kills the whole group: the shell,
// its foreground children, pipelines, background jobs, and the watcher.
// What has left the group escapes: a process that called setsid or
// setpgid (a daemon; a job of a shell with job control on, set -m) is in
// a group of its own, and neither this nor the kill on timeout or
// completion reaches it. On Linux the shell also has a parent-death
// signal (see startShell), which does not depend on the watcher.
//
// The watcher has no parent-death signal — it must outlive the harness to
// kill the group. It does not hold cmd's stdin, stdout or stderr: its
// stdin and stderr are /dev/null, and its stdout a pipe of its own on
// which it says it is ready (see watcherScript), then /dev/null too; so
// the command's output pipes close when the command's processes end,
// whatever the watcher does. (Like any child, it does hold what the
// harness itself inherited without close-on-exec.) Its environment is
// empty, so its /proc environ shows no credentials.
//
// If the watcher cannot start, neither does cmd: a command is not run
// unwatched. On success the caller must call release, once cmd has
// exited.
func startCommand(cmd *exec.Cmd) (*processGroup, error) {
	return startWatched(watcherShell, cmd)
}

// startWatched is startCommand with the watcher run by sh.
func startWatched(sh string, cmd *exec.Cmd) (*processGroup, error) {
	watcher, lifeline, err := startWatcher(sh)
	if err != nil {
		return nil, err
	}
	g := &processGroup{watcher: watcher, lifeline: lifeline, unlock: func() {}}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = watcher.Process.Pid
	unlock, err := startShell(cmd)
	if err != nil {
		unlock()
		g.release()
		return nil, fmt.Errorf("start %s in the group of watcher %d: %w", cmd.Args[0], watcher.Process.Pid, err)
	}
	g.unlock, g.shell = unlock, cmd.Process
	return g, nil
}

// startWatcher starts watcherScript with sh as the leader of a new process
// group, waits until it says ready, and returns it with the write end of
// its lifeline.
func startWatcher(sh string) (watcher *exec.Cmd, lifeline *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("start the process-group watcher: lifeline pipe: %w", err)
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		r.Close()
		w.Close()
		return nil, nil, fmt.Errorf("start the process-group watcher: stdout pipe: %w", err)
	}
	defer readyR.Close()
	watcher = exec.Command(sh, "-c", watcherScript)
	watcher.Dir = "/"                  // not to keep the workspace busy
	watcher.Env = []string{}           // only builtins run; no credentials in its environ
	watcher.Stdout = readyW            // stdin and stderr are /dev/null
	watcher.ExtraFiles = []*os.File{r} // fd 3
	watcher.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = watcher.Start()
	r.Close() // the watcher has its own copies
	readyW.Close()
	if err != nil {
		w.Close()
		return nil, nil, fmt.Errorf("start the process-group watcher %s: %w", sh, err)
	}
	// The watcher writes "ready\n" and closes its stdout (or dies): read to
	// the end of file.
	_ = readyR.SetReadDeadline(time.Now().Add(watcherReadyTimeout))
	said, err := io.ReadAll(readyR)
	if err == nil && string(said) != "ready\n" {
		err = fmt.Errorf("it said %q, not \"ready\"", said)
	}
	if err != nil {
		_ = syscall.Kill(-watcher.Process.Pid, syscall.SIGKILL)
		w.Close()
		werr := watcher.Wait()
		return nil, nil, fmt.Errorf("start the process-group watcher %s: %w (watcher: %v)", sh, err, werr)
	}
	return watcher, w, nil
}

// kill kills the whole group with SIGKILL: the command's processes and
// the watcher; and the shell's own process, wherever it is. The shell is
// not the group's leader, so it can leave the group (exec setsid …, or a
// program it execs that calls setpgid, as GNU timeout does): then the
// group kill misses it, and without the direct kill a timeout or a cancel
// would wait for it to end by itself. It may be called after they have
// exited: a group with no members left is ESRCH, a reaped shell
// os.ErrProcessDone, both ignored.
func (g *processGroup) kill() {
	_ = syscall.Kill(-g.watcher.Process.Pid, syscall.SIGKILL)
	if g.shell != nil {
		_ = g.shell.Signal(syscall.SIGKILL)
	}
}

// terminate sends SIGTERM to the group and to the shell, wherever it is
// (see kill). The watcher ignores it; so may the command.
func (g *processGroup) terminate() {
	_ = syscall.Kill(-g.watcher.Process.Pid, syscall.SIGTERM)
	if g.shell != nil {
		_ = g.shell.Signal(syscall.SIGTERM)
	}
}

// release is called once, after the command's shell has exited: it kills
// what is left of the group, the watcher included, closes the lifeline
// (were the watcher still alive, it would kill the group itself at that
// end of file), reaps the watcher, and lets go of the shell's thread.
func (g *processGroup) release() {
	g.kill()
	g.lifeline.Close()
	_ = g.watcher.Wait() // killed: the error says so and is expected
	g.unlock()
}
