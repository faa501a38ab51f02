package mcp

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// process is a local server: a long-running command spoken to over its
// stdin and stdout. In modes workspace-write and read-only it runs in the
// sandbox (sandbox.Cmd): it dies with the harness however the harness
// dies, and everything it starts dies with it. In mode off it runs as the
// user, in a process group of its own that is killed when the server is
// closed, and with a parent-death signal.
type process struct {
	stdin  *os.File // the write end of the server's stdin
	stdout *os.File // the read end of the server's stdout
	kill   func()
	done   chan struct{} // closed when the server has ended
	exit   string        // how it ended, once done is closed
	stderr *tail
	// closing is set when the harness closes the server: its end is then
	// no surprise.
	mu      sync.Mutex // guards closing
	closing bool
}

// tailSize is how much of a server's stderr is kept to explain its death.
const tailSize = 4 << 10

// tail keeps the last bytes written to it.
type tail struct {
	mu  sync.Mutex // guards buf
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// commandLine is the shell line that runs command with args, each quoted:
// the shell is replaced by the server (exec), so that it is the server
// whose stdin closes and whose exit is reported.
func commandLine(command string, args []string) string {
	parts := make([]string, 0, len(args)+2)
	parts = append(parts, "exec", shellQuote(command))
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// environ is the server's environment before the allow-list: its own
// variables first (the first of a name wins), then the harness's.
func environ(own map[string]string, base []string) []string {
	names := make([]string, 0, len(own))
	for k := range own {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, 0, len(own)+len(base))
	for _, k := range names {
		out = append(out, k+"="+own[k])
	}
	return append(out, base...)
}

// startProcess starts the server s in spec (its workspace is the
// directory it runs in), with env as the environment the allow-list is
// applied to (the server's own variables always pass).
func startProcess(ctx context.Context, s Server, spec sandbox.Spec, env []string) (*process, error) {
	spec = spec.Clone()
	for k := range s.Env {
		spec.Env = append(spec.Env, k)
	}
	spec.Network = spec.Network || s.Network
	// The commands' network allow-list is not a server's: its proxy
	// records each connection on a command's report, and a server that
	// lives across calls has none. A server has the network or not.
	spec.NetworkAllow = nil
	full := environ(s.Env, env)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	p := &process{stdin: inW, stdout: outR, done: make(chan struct{}), stderr: &tail{}}
	closeChildEnds := func() {
		inR.Close()
		outW.Close()
		errW.Close()
	}
	var wait func() string
	if spec.Mode == sandbox.Off {
		wait, err = p.startUnsandboxed(s, spec, full, inR, outW, errW)
	} else {
		c := &sandbox.Cmd{Spec: spec, Line: commandLine(s.Command, s.Args), Env: full, Stdin: inR, Stdout: outW, Stderr: errW}
		err = c.Start(ctx)
		if err == nil {
			p.kill = c.Kill
			wait = func() string {
				e, err := c.Wait()
				if err != nil {
					return fmt.Sprintf("%v (%v)", e, err)
				}
				return e.String()
			}
		}
	}
	closeChildEnds()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	stderrDone := make(chan struct{})
	go func() {
		defer close(stderrDone)
		_, _ = io.Copy(p.stderr, errR)
		errR.Close()
	}()
	go func() {
		exit := wait()
		// What the server said last is part of how it ended.
		select {
		case <-stderrDone:
		case <-time.After(time.Second):
		}
		p.exit = exit
		close(p.done)
	}()
	return p, nil
}

// startUnsandboxed starts the server as the user (mode off), in the
// workspace, with the allow-listed environment and a private temporary
// directory, in a process group of its own.
func (p *process) startUnsandboxed(s Server, spec sandbox.Spec, env []string, stdin, stdout, stderr *os.File) (func() string, error) {
	tmp, err := os.MkdirTemp("", sandbox.TempPattern)
	if err != nil {
		return nil, fmt.Errorf("the server's temporary directory: %w", err)
	}
	path := s.Command
	if !strings.Contains(path, "/") {
		// Looked up on the PATH the server gets, not the harness's.
		if lp, err := lookPath(path, spec.Environ(env, "")); err == nil {
			path = lp
		}
	}
	cmd := &exec.Cmd{
		Path: path, Args: append([]string{s.Command}, s.Args...), Dir: spec.Workspace,
		Env: spec.Environ(env, tmp), Stdin: stdin, Stdout: stdout, Stderr: stderr,
		SysProcAttr: groupDyingWithUs(),
	}
	unlock, err := sandbox.StartLocked(cmd)
	if err != nil {
		unlock()
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("start %s: %w", s.Command, err)
	}
	pid := cmd.Process.Pid
	p.kill = func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }
	return func() string {
		_ = cmd.Wait()
		unlock()
		// What it left in its group ends with it.
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		os.RemoveAll(tmp)
		return cmd.ProcessState.String()
	}, nil
}

// lookPath finds name on the PATH of env.
func lookPath(name string, env []string) (string, error) {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range strings.Split(v, ":") {
				if dir == "" {
					continue
				}
				p := dir + "/" + name
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return p, nil
				}
			}
		}
	}
	return "", exec.ErrNotFound
}

// exited reports whether the server has ended, and how.
func (p *process) exited() (string, bool) {
	select {
	case <-p.done:
		return p.exit, true
	default:
		return "", false
	}
}

// describeExit says how the server ended, with the last of its stderr.
func (p *process) describeExit() string {
	exit, ok := p.exited()
	if !ok {
		return "it is still running"
	}
	s := "it exited (" + exit + ")"
	if t := p.stderr.String(); t != "" {
		s += "; the end of its stderr: " + oneLine(t, 400)
	}
	return s
}

// close ends the server: its stdin is closed (an MCP server ends at the
// end of its input), and after grace it is killed.
func (p *process) close(grace time.Duration) error {
	p.mu.Lock()
	p.closing = true
	p.mu.Unlock()
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(grace):
		p.kill()
		<-p.done
	}
	p.stdout.Close()
	return nil
}

// closed reports whether the harness closed the server.
func (p *process) closed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closing
}

// oneLine squashes s onto one line of at most n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return s
}
