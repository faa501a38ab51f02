package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/sandbox"
)

type commandArgs struct {
	Command        string   `json:"command"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}

// stopGrace is how long a cancelled command has between SIGTERM and
// SIGKILL: time to remove a lock file or flush what it writes, not to
// go on working.
const stopGrace = 500 * time.Millisecond

// drainGrace is how long run_command waits, after the command has ended,
// for its output pipes to close. In a sandbox they close at once: every
// process of the command is dead when its helper is. Unsandboxed, only a
// process that left the process group (setsid, a daemon) can hold them
// open longer; its output after that is not kept.
const drainGrace = 2 * time.Second

// commandTool is run_command. The command is a shell command line, run as
// sh -c COMMAND (cmd /C on Windows) rather than an argv: a model writes
// shell — pipes, redirections, "cd sub && go test" — and an argv would not
// make a call safer, since what a command may reach is the sandbox's to
// decide, and whether it runs at all the execute capability's and the
// confirmation's. The person confirming sees the very string the shell
// runs.
//
// The command runs in the workspace directory with no stdin, in the
// sandbox of spec (package sandbox): by default workspace-write — it reads
// the file system, writes only the workspace, its private $TMPDIR and the
// workspace's Go build cache, never the store, .git/hooks, .git/config or .git/info;
// no network; it sees only its own processes, cannot signal the harness,
// has no terminal. Its environment is the allow-list (sandbox.EnvAllowList
// and the spec's Env), never the harness's whole environment: no
// provider key or token reaches it, and so none reaches its output, the
// log or the model. If the sandbox is unavailable here, the call fails
// with the reason; only mode off runs a command unsandboxed.
//
// When the timeout passes, every process of the command is killed
// (SIGKILL). When ctx is done — the run was cancelled — they are sent
// SIGTERM first, and SIGKILL stopGrace (500 ms) later; the call returns
// ctx's error with the report of what ran. When the shell exits by itself, whatever it left
// running is killed too — run_command is not for starting servers in the
// background, and nothing it started keeps changing the workspace after
// the runtime has observed it. In a sandbox that is the kernel's work:
// the sandbox's helper is the first process of the command's PID
// namespace, and when it ends (killed, or after the shell exited) every
// process in the namespace ends, setsid and double forks included; the
// helper dies with the harness (a parent-death signal and a lifeline
// pipe). In mode off the shell runs in a process group led by a watcher
// that kills the group if the harness dies (see startCommand); only
// processes that left the group escape it.
func commandTool(ws *workspace, lim Limits, spec sandbox.Spec) *tool {
	maxSec := lim.MaxCommandTimeout.Seconds()
	return &tool{
		sandbox: &spec,
		name:    RunCommand,
		description: fmt.Sprintf("Run a shell command (sh -c) in the workspace directory and return its exit code, "+
			"stdout and stderr. Each of stdout and stderr keeps its first and last %d bytes; the middle of longer "+
			"output is cut and the cut is marked. The command is killed, with any processes it started, after "+
			"timeout_seconds (default %g, at most %g); background processes do not outlive the command. %s",
			lim.OutputBytes/2, lim.CommandTimeout.Seconds(), maxSec, sandboxDescription(spec)),
		schema: objectSchema(map[string]prop{
			"command":         {"type": "string", "minLength": 1, "description": "The shell command line, e.g. \"go test ./... 2>&1 | tail -n 50\"."},
			"timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": maxSec, "description": fmt.Sprintf("Seconds before the command is killed (default %g).", lim.CommandTimeout.Seconds())},
		}, "command"),
		capability: action.Execute,
		confirm:    true,
		run: func(ctx context.Context, raw json.RawMessage, recorded *facts.Sandbox) (facts.Report, error) {
			var a commandArgs
			if err := decodeArgs(raw, &a, "command"); err != nil {
				return failed(RunCommand, err), nil
			}
			if strings.TrimSpace(a.Command) == "" {
				return failed(RunCommand, fmt.Errorf("%w: field \"command\" is empty", ErrInvalidArgs)), nil
			}
			timeout := lim.CommandTimeout
			if a.TimeoutSeconds != nil {
				sec := *a.TimeoutSeconds
				if sec <= 0 || sec > maxSec {
					return failed(RunCommand, fmt.Errorf("%w: field \"timeout_seconds\" is %g; want more than 0 and at most %g", ErrInvalidArgs, sec, maxSec)), nil
				}
				timeout = time.Duration(sec * float64(time.Second))
			}
			run, err := asRecorded(spec, recorded)
			if err != nil {
				return failed(RunCommand, err), nil
			}
			return runCommand(ctx, ws.dir, a.Command, run, timeout, lim.OutputBytes)
		},
		runCheck: func(ctx context.Context, argv []string, recorded *facts.Sandbox) (facts.Report, *facts.Sandbox, error) {
			run, err := checkSandbox(spec, recorded)
			if err != nil {
				return facts.Report{}, nil, err
			}
			rec := run.Record()
			rep, err := runCommand(ctx, ws.dir, shellQuote(argv), run, lim.CommandTimeout, lim.OutputBytes)
			rep.Error = strings.TrimPrefix(rep.Error, RunCommand+": ")
			return rep, &rec, err
		},
	}
}

// checkSandbox is the sandbox a declared check's command runs in: the one
// its request recorded (see asRecorded), with the workspace read-only. A
// check runs after the action's observation: what it wrote would be in no
// record, so it writes nothing the observer watches (its $TMPDIR and the
// Go build cache stay writable, for go test). A request recorded with
// mode off runs its check as its commands ran: unsandboxed.
func checkSandbox(spec sandbox.Spec, recorded *facts.Sandbox) (sandbox.Spec, error) {
	run, err := asRecorded(spec, recorded)
	if err != nil {
		return run, err
	}
	run = run.Clone()
	if run.Mode == sandbox.WorkspaceWrite {
		run.Mode = sandbox.ReadOnly
	}
	return run, nil
}

// shellQuote is argv as one shell command line that runs it as it is:
// each word single-quoted, exec'd.
func shellQuote(argv []string) string {
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return "exec " + strings.Join(words, " ")
}

// asRecorded is the sandbox a command runs in: the one its request
// recorded — the mode and network the person approving it was shown — on
// the tools' workspace; spec when the request recorded none.
func asRecorded(spec sandbox.Spec, recorded *facts.Sandbox) (sandbox.Spec, error) {
	if recorded == nil {
		return spec, nil
	}
	mode, err := sandbox.ParseMode(recorded.Mode)
	if err != nil {
		return spec, fmt.Errorf("the sandbox its request recorded: %w", err)
	}
	run := spec.Clone()
	run.Mode, run.Network = mode, recorded.Network && mode != sandbox.Off
	run.NetworkAllow = slices.Clone(recorded.NetworkAllow)
	return run, nil
}

// sandboxDescription tells the model what its commands may reach.
func sandboxDescription(spec sandbox.Spec) string {
	env := "The environment holds only " + strings.Join(spec.EnvNames(), ", ") + "; no credentials."
	switch spec.Mode {
	case sandbox.Off:
		return "The command is not sandboxed. " + env
	case sandbox.ReadOnly:
		env = "It runs in a read-only sandbox: it can write only $TMPDIR (private, removed after the command) and the Go build cache, not the workspace. " + env
	default:
		env = "It runs in a sandbox: it can write only the workspace, $TMPDIR (private, removed after the command) and the Go build cache; .git/hooks, .git/config and the harness's store are out of reach. " + env
	}
	switch {
	case spec.Proxied():
		env += " There is no network but loopback and an HTTP(S) proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY are set) that reaches only these hosts: " +
			strings.Join(spec.NetworkAllow, ", ") + "; it refuses others with HTTP 403 and the reason."
	case !spec.Network:
		env += " There is no network (only loopback)."
	}
	return env
}

// exitInfo is how a command ended: its exit code (-1 for a signal) and
// that said as os.ProcessState says it.
type exitInfo struct {
	code int
	desc string
	// network is what the command did through its allow-list's proxy
	// (sandbox.Cmd.Network): nil without an allow-list.
	network *facts.Network
}

// running is a started command, sandboxed or not.
type running interface {
	// wait waits for the command's shell (and, sandboxed, every process of
	// the command) to end. err says the sandbox failed, not the command.
	wait() (exitInfo, error)
	// terminate sends SIGTERM to the processes of the command it can
	// reach, asking them to stop; kill kills every process of the command
	// it can reach. Both may be called at any time after the start, also
	// after wait returned.
	terminate()
	kill()
	// release is called once, after wait returned.
	release()
}

// sandboxed is a command run by sandbox.Cmd.
type sandboxed struct{ c *sandbox.Cmd }

func (s sandboxed) wait() (exitInfo, error) {
	e, err := s.c.Wait()
	return exitInfo{code: e.Code, desc: e.String(), network: s.c.Network()}, err
}
func (s sandboxed) terminate() { s.c.Terminate() }
func (s sandboxed) kill()      { s.c.Kill() }
func (s sandboxed) release()   {}

// unsandboxed is a command of mode off, run by startCommand.
type unsandboxed struct {
	cmd   *exec.Cmd
	group *processGroup
	tmp   string
}

func (u unsandboxed) wait() (exitInfo, error) {
	_ = u.cmd.Wait() // the exit is read from cmd.ProcessState
	state := u.cmd.ProcessState
	return exitInfo{code: state.ExitCode(), desc: state.String()}, nil
}
func (u unsandboxed) terminate() { u.group.terminate() }
func (u unsandboxed) kill()      { u.group.kill() }
func (u unsandboxed) release() {
	u.group.release()
	_ = os.RemoveAll(u.tmp)
}

// start starts command in spec's sandbox (ctx bounds the sandbox's set-up),
// or, in mode off, in a watched process group with the allow-listed
// environment and a private temporary directory.
func start(ctx context.Context, dir, command string, spec sandbox.Spec, stdin, stdout, stderr *os.File) (running, error) {
	if spec.Mode != sandbox.Off {
		c := &sandbox.Cmd{Spec: spec, Line: command, Stdin: stdin, Stdout: stdout, Stderr: stderr}
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		return sandboxed{c}, nil
	}
	tmp, err := os.MkdirTemp("", sandbox.TempPattern)
	if err != nil {
		return nil, fmt.Errorf("the command's temporary directory: %w", err)
	}
	argv := shell(command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = spec.Environ(os.Environ(), tmp)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if stdin != nil {
		cmd.Stdin = stdin
	}
	group, err := startCommand(cmd)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, err
	}
	return unsandboxed{cmd: cmd, group: group, tmp: tmp}, nil
}

func runCommand(ctx context.Context, dir, command string, spec sandbox.Spec, timeout time.Duration, outputCap int) (facts.Report, error) {
	r := runProcess(ctx, dir, command, spec, timeout, outputCap, nil)
	if r.startErr != nil {
		switch {
		case ctx.Err() != nil:
			rep := failed(RunCommand, fmt.Errorf("not started: %w", ctx.Err()))
			return rep, fmt.Errorf("%s: %w", RunCommand, ctx.Err())
		case errors.Is(r.startErr, context.DeadlineExceeded):
			return failed(RunCommand, fmt.Errorf("timed out after %s while the sandbox was set up; the command did not run", timeout)), nil
		}
		return failed(RunCommand, r.startErr), nil
	}
	stdout, stderr, timedOut, cancelled, end, elapsed := r.stdout, r.stderr, r.timedOut, r.cancelled, r.end, r.elapsed
	exit := end.exit
	rep := facts.Report{Status: facts.StatusFailed, Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: exit.code, Network: exit.network}
	var lines []string
	lines = append(lines, "$ "+command)
	switch {
	case timedOut:
		rep.Error = fmt.Sprintf("%s: timed out after %s; the command and its process group were killed", RunCommand, timeout)
	case cancelled:
		rep.Error = fmt.Sprintf("%s: cancelled after %s; the command and its processes were sent SIGTERM, then SIGKILL after %s", RunCommand, elapsed.Round(time.Millisecond), stopGrace)
	case end.err != nil:
		rep.Error = fmt.Sprintf("%s: %v", RunCommand, end.err)
	case exit.code == 0:
		rep.Status = facts.StatusSucceeded
	case exit.code > 0:
		rep.Error = fmt.Sprintf("%s: exited with code %d", RunCommand, exit.code)
	default:
		rep.Error = fmt.Sprintf("%s: ended by %s", RunCommand, exit.desc)
	}
	if !timedOut && !cancelled {
		lines = append(lines, fmt.Sprintf("exit code %d after %s", exit.code, elapsed.Round(time.Millisecond)))
	}
	for _, s := range []struct {
		name string
		c    *capped
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if cut := s.c.cut(); cut > 0 {
			lines = append(lines, fmt.Sprintf("%s: %s, %d cut from the middle", s.name, present.Plural(s.c.total, "byte", "bytes"), cut))
		}
	}
	if exit.network != nil {
		lines = append(lines, present.NetworkLines(exit.network)...)
	}
	rep.Transcript = strings.Join(lines, "\n")
	if cancelled {
		return rep, fmt.Errorf("%s: %w", RunCommand, ctx.Err())
	}
	return rep, nil
}

// ran is how a process runProcess ran ended.
type ran struct {
	startErr            error // it did not start
	stdout, stderr      *capped
	timedOut, cancelled bool
	end                 ended
	elapsed             time.Duration
}

// ended is a process's exit, as its wait returned it.
type ended struct {
	exit exitInfo
	err  error
}

// runProcess runs command as runCommand says, with stdin (nil: none) on
// its standard input, and returns how it ended.
func runProcess(ctx context.Context, dir, command string, spec sandbox.Spec, timeout time.Duration, outputCap int, stdin []byte) ran {
	// The pipes are made here rather than by exec, so that the wait
	// returns when the command ends, not when the last holder of a pipe
	// does; the pipes are drained then.
	outR, outW, err := os.Pipe()
	if err != nil {
		return ran{startErr: fmt.Errorf("stdout pipe: %w", err)}
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return ran{startErr: fmt.Errorf("stderr pipe: %w", err)}
	}
	defer errR.Close()
	started := time.Now()
	deadline := started.Add(timeout)
	startCtx, cancelStart := context.WithDeadline(ctx, deadline) // the timeout bounds the sandbox's set-up too
	var inR *os.File
	if stdin != nil {
		r, w, err := os.Pipe()
		if err != nil {
			cancelStart()
			outW.Close()
			errW.Close()
			return ran{startErr: fmt.Errorf("stdin pipe: %w", err)}
		}
		inR = r
		defer r.Close()
		go func() {
			// A command that does not read its input ends, and closing
			// the read end then ends this write.
			_, _ = w.Write(stdin)
			w.Close()
		}()
	}
	proc, err := start(startCtx, dir, command, spec, inR, outW, errW)
	cancelStart()
	outW.Close()
	errW.Close()
	if inR != nil {
		inR.Close()
	}
	if err != nil {
		return ran{startErr: err}
	}
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	defer proc.release() // after the command has ended: every return below waits for it
	stdout, stderr := &capped{limit: outputCap}, &capped{limit: outputCap}
	var drain sync.WaitGroup
	live := outputOf(ctx)
	drain.Go(func() { _, _ = io.Copy(teeTo(stdout, live, "stdout"), outR) })
	drain.Go(func() { _, _ = io.Copy(teeTo(stderr, live, "stderr"), errR) })

	waited := make(chan ended, 1)
	go func() {
		e, err := proc.wait()
		waited <- ended{e, err}
	}()
	var timedOut, cancelled bool
	var end ended
	select {
	case end = <-waited:
	case <-timer.C:
		timedOut = true
		proc.kill()
		end = <-waited
	case <-ctx.Done():
		// Asked to stop, not timed out: SIGTERM first, so that the
		// command may leave things tidy, then SIGKILL after stopGrace.
		cancelled = true
		proc.terminate()
		grace := time.NewTimer(stopGrace)
		select {
		case end = <-waited:
		case <-grace.C:
			proc.kill()
			end = <-waited
		}
		grace.Stop()
	}
	elapsed := time.Since(started)
	proc.kill() // what the command left running in its group, and the watcher
	drained := make(chan struct{})
	go func() {
		drain.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(drainGrace):
		outR.Close() // unblocks the copies
		errR.Close()
		<-drained
	}
	return ran{stdout: stdout, stderr: stderr, timedOut: timedOut, cancelled: cancelled, end: end, elapsed: elapsed}
}

// capped keeps the head and the tail of a stream, each half of limit
// bytes, and counts what falls between them.
type capped struct {
	limit int
	head  []byte
	tail  []byte // grows to twice the tail's size, then keeps the last part
	total int64
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	headCap := c.limit / 2
	tailCap := c.limit - headCap
	if room := headCap - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 && tailCap > 0 {
		c.tail = append(c.tail, p...)
		if len(c.tail) > 2*tailCap {
			c.tail = append(c.tail[:0], c.tail[len(c.tail)-tailCap:]...)
		}
	}
	return n, nil
}

// kept returns the head and tail as shown: the tail at most its size,
// both trimmed to whole UTF-8 sequences where they meet the cut.
func (c *capped) kept() (head, tail []byte) {
	head, tail = c.head, c.tail
	if c.total <= int64(c.limit) {
		return head, tail // nothing was cut
	}
	if tc := c.limit - c.limit/2; len(tail) > tc {
		tail = tail[len(tail)-tc:]
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
		if utf8.RuneStart(head[i]) {
			if !utf8.FullRune(head[i:]) {
				head = head[:i]
			}
			break
		}
	}
	return head, tail
}

// cut is how many bytes are not shown.
func (c *capped) cut() int64 {
	head, tail := c.kept()
	return c.total - int64(len(head)) - int64(len(tail))
}

func (c *capped) String() string {
	head, tail := c.kept()
	cut := c.total - int64(len(head)) - int64(len(tail))
	if cut == 0 {
		return string(head) + string(tail)
	}
	return fmt.Sprintf("%s\n… [%s cut] …\n%s", head, present.Plural(cut, "byte", "bytes"), tail)
}

// sandboxSpec is the sandbox of the tools of root: spec, or the default.
func sandboxSpec(root string, spec *sandbox.Spec) (sandbox.Spec, error) {
	if spec == nil {
		return sandbox.Default(root, "")
	}
	s := spec.Clone()
	if s.Workspace == "" {
		s.Workspace = root
	} else if real, err := filepath.EvalSymlinks(s.Workspace); err != nil || real != root {
		return sandbox.Spec{}, fmt.Errorf("WithSandbox: the sandbox's workspace %s is not the tools' root %s", s.Workspace, root)
	} else {
		s.Workspace = real
	}
	if err := s.Validate(); err != nil {
		return sandbox.Spec{}, fmt.Errorf("WithSandbox: %w", err)
	}
	return s, nil
}

// liveKey carries the output function of the action running (liveFor).
type liveKey struct{}

// liveFor returns ctx under which run_command gives its output, as it
// comes, to the action.Output of ctx (action.WithOutput) as the action's
// actionID.
func liveFor(ctx context.Context, actionID string) context.Context {
	show := action.OutputOf(ctx)
	if show == nil {
		return ctx
	}
	thread := action.ThreadOf(ctx)
	return context.WithValue(ctx, liveKey{}, func(stream string, p []byte) { show(thread, actionID, stream, p) })
}

func outputOf(ctx context.Context) func(string, []byte) {
	f, _ := ctx.Value(liveKey{}).(func(string, []byte))
	return f
}

// teeTo writes to w, and gives what it writes to show as stream.
func teeTo(w io.Writer, show func(string, []byte), stream string) io.Writer {
	if show == nil {
		return w
	}
	return writerFunc(func(p []byte) (int, error) {
		show(stream, p)
		return w.Write(p)
	})
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
