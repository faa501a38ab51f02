package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
)

type commandArgs struct {
	Command        string   `json:"command"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}

// drainGrace is how long run_command waits, after the command's process
// group is gone, for its output pipes to close. Only a process that left
// the group (setsid, a daemon) can hold them open longer; its output after
// that is not kept.
const drainGrace = 2 * time.Second

// commandTool is run_command. The command is a shell command line, run as
// sh -c COMMAND (cmd /C on Windows) rather than an argv: a model writes
// shell — pipes, redirections, "cd sub && go test" — and an argv would not
// make a call safer, since executing anything at all is what the execute
// capability and the confirmation are for. The person confirming sees the
// very string the shell runs.
//
// The command runs in the workspace directory with no stdin and the
// harness's environment less the model providers' credentials (see
// commandEnv and WithEnvDrop): a command like env would otherwise put
// OPENAI_API_KEY in its output, hence in the log and before the model.
// Dropping them is hygiene, not a sandbox: the file tools' confinement does
// not apply to a command, which can reach whatever the user running the
// harness can, credentials kept in files included.
//
// On Unix the shell runs in a new process group, led by a watcher that
// kills the group if the harness dies (see startCommand). When the timeout
// passes or ctx is done, the whole group is killed (SIGKILL), so children
// and grandchildren die with it; when the shell exits by itself, whatever
// it left running in its group is killed too — run_command is not for
// starting servers in the background, and nothing it started keeps
// changing the workspace after the runtime has observed it. When the
// harness is itself killed (SIGKILL, the OOM killer), the watcher kills
// the group; on Linux the shell also has a parent-death signal (SIGKILL).
// Only processes that left the group (setsid, daemons) escape all this;
// the shell's own process is killed by its pid too, wherever it went.
// The group's id is the watcher's, not the shell's: "kill 0" in a command
// signals its group, "kill -- -$$" does not.
func commandTool(ws *workspace, lim Limits, envDrop []string) *tool {
	maxSec := lim.MaxCommandTimeout.Seconds()
	return &tool{
		name: RunCommand,
		description: fmt.Sprintf("Run a shell command (sh -c) in the workspace directory and return its exit code, "+
			"stdout and stderr. Each of stdout and stderr keeps its first and last %d bytes; the middle of longer "+
			"output is cut and the cut is marked. The command is killed, with any processes it started, after "+
			"timeout_seconds (default %g, at most %g); background processes do not outlive the command. "+
			"The environment is the harness's without API credentials: OPENAI_API_KEY, ANTHROPIC_API_KEY and "+
			"any other *_API_KEY variable are not set.",
			lim.OutputBytes/2, lim.CommandTimeout.Seconds(), maxSec),
		schema: objectSchema(map[string]prop{
			"command":         {"type": "string", "minLength": 1, "description": "The shell command line, e.g. \"go test ./... 2>&1 | tail -n 50\"."},
			"timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "maximum": maxSec, "description": fmt.Sprintf("Seconds before the command is killed (default %g).", lim.CommandTimeout.Seconds())},
		}, "command"),
		capability: action.Execute,
		confirm:    true,
		run: func(ctx context.Context, raw json.RawMessage) (facts.Report, error) {
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
			return runCommand(ctx, ws.dir, a.Command, commandEnv(os.Environ(), envDrop), timeout, lim.OutputBytes)
		},
	}
}

// credentialVars are the model providers' credentials, which run_command
// leaves out of a command's environment; so is every variable whose name
// ends in _API_KEY.
var credentialVars = []string{
	"OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
	"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
}

// commandEnv is env ("NAME=value" entries) less the credentials: the
// credentialVars, every name ending in _API_KEY, and the names in drop (a
// name ending in "*" drops every variable it is a prefix of). Names are
// compared ignoring case, as Windows does, so that "openai_api_key" does
// not slip through either.
func commandEnv(env, drop []string) []string {
	dropped := func(name string) bool {
		if strings.HasSuffix(strings.ToUpper(name), "_API_KEY") {
			return true
		}
		for _, list := range [][]string{credentialVars, drop} {
			for _, d := range list {
				if p, ok := strings.CutSuffix(d, "*"); ok {
					if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
						return true
					}
				} else if strings.EqualFold(name, d) {
					return true
				}
			}
		}
		return false
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == "" && strings.HasPrefix(kv, "=") {
			// Windows keeps per-drive directories as "=C:=C:\dir".
			name, _, _ = strings.Cut(kv[1:], "=")
			name = "=" + name
		}
		if !dropped(name) {
			out = append(out, kv)
		}
	}
	return out
}

func runCommand(ctx context.Context, dir, command string, env []string, timeout time.Duration, outputCap int) (facts.Report, error) {
	argv := shell(command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	// The pipes are made here rather than by exec, so that Wait returns
	// when the shell exits, not when the last holder of a pipe does; the
	// group is then killed and the pipes drained.
	outR, outW, err := os.Pipe()
	if err != nil {
		return failed(RunCommand, fmt.Errorf("stdout pipe: %w", err)), nil
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return failed(RunCommand, fmt.Errorf("stderr pipe: %w", err)), nil
	}
	defer errR.Close()
	cmd.Stdout, cmd.Stderr = outW, errW
	started := time.Now()
	group, err := startCommand(cmd)
	outW.Close()
	errW.Close()
	if err != nil {
		return failed(RunCommand, err), nil
	}
	defer group.release() // after the shell has exited: every return below waits for it
	stdout, stderr := &capped{limit: outputCap}, &capped{limit: outputCap}
	var drain sync.WaitGroup
	drain.Go(func() { _, _ = io.Copy(stdout, outR) })
	drain.Go(func() { _, _ = io.Copy(stderr, errR) })

	waited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit is read from cmd.ProcessState
		close(waited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var timedOut, cancelled bool
	select {
	case <-waited:
	case <-timer.C:
		timedOut = true
		group.kill()
		<-waited
	case <-ctx.Done():
		cancelled = true
		group.kill()
		<-waited
	}
	elapsed := time.Since(started)
	group.kill() // what the command left running in its group, and the watcher
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

	state := cmd.ProcessState
	rep := facts.Report{Status: facts.StatusFailed, Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: state.ExitCode()}
	var lines []string
	lines = append(lines, "$ "+command)
	switch {
	case timedOut:
		rep.Error = fmt.Sprintf("%s: timed out after %s; the command and its process group were killed", RunCommand, timeout)
	case cancelled:
		rep.Error = fmt.Sprintf("%s: cancelled after %s; the command and its process group were killed", RunCommand, elapsed.Round(time.Millisecond))
	case state.ExitCode() == 0:
		rep.Status = facts.StatusSucceeded
	case state.ExitCode() > 0:
		rep.Error = fmt.Sprintf("%s: exited with code %d", RunCommand, state.ExitCode())
	default:
		rep.Error = fmt.Sprintf("%s: ended by %s", RunCommand, state)
	}
	if !timedOut && !cancelled {
		lines = append(lines, fmt.Sprintf("exit code %d after %s", state.ExitCode(), elapsed.Round(time.Millisecond)))
	}
	for _, s := range []struct {
		name string
		c    *capped
	}{{"stdout", stdout}, {"stderr", stderr}} {
		if cut := s.c.cut(); cut > 0 {
			lines = append(lines, fmt.Sprintf("%s: %d bytes, %d cut from the middle", s.name, s.c.total, cut))
		}
	}
	rep.Transcript = strings.Join(lines, "\n")
	if cancelled {
		return rep, fmt.Errorf("%s: %w", RunCommand, ctx.Err())
	}
	return rep, nil
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
	return fmt.Sprintf("%s\n… [%d bytes cut] …\n%s", head, cut, tail)
}
