package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox/internal/helper"
	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
)

// The helper is harness-sandbox beside the program (see helperProgram)
// or, without one, this very program, re-executed (/proc/self/exe): the
// first process of new namespaces, told so by helper.Env in its otherwise
// empty environment. Its files and what it is told are package helper's.
type (
	request = helper.Request
	message = helper.Message
)

// process is a started helper.
type process struct {
	helper   helperProc
	lifeline *os.File
	unlock   func()
	ended    func() // tells Spec.Nested the command has ended
	tmp      string
	msgs     <-chan message // the helper's messages, closed when it is gone
	// early: the command has ended at the helper's Exited message (the
	// helper has killed and reaped every other process of it by then),
	// before the helper itself is gone. Only for a launched helper, which
	// the launcher reaps.
	early    bool
	waitOnce sync.Once
	exit     Exit
	err      error
	// With an allow-list: the harness's end of the socket the helper
	// sends the proxy's listener on, the proxy serving it, and, once the
	// command has ended, its record.
	proxyCh *os.File
	proxy   *netproxy.Proxy
	network *facts.Network
}

// helperProc is a started helper: the harness's own child, or one its
// launcher started (see launcherOf).
type helperProc interface {
	// signal sends sig to the helper; nothing once it has ended.
	signal(sig syscall.Signal)
	// wait waits for the helper to end, and says how it did.
	wait() syscall.WaitStatus
	// id is its process id.
	id() int
}

// child is a helper the harness started itself.
type child struct {
	cmd  *exec.Cmd
	once sync.Once
	ws   syscall.WaitStatus
}

func (c *child) signal(sig syscall.Signal) { _ = c.cmd.Process.Signal(sig) }

func (c *child) wait() syscall.WaitStatus {
	c.once.Do(func() {
		_ = c.cmd.Wait() // its error says how it ended: the state says it too
		c.ws, _ = c.cmd.ProcessState.Sys().(syscall.WaitStatus)
	})
	return c.ws
}

func (c *child) id() int { return c.cmd.Process.Pid }

// gone is a helper the launcher was asked for and did not answer for (it
// failed, or is gone): none runs, or one that its parent-death signal
// has killed.
type gone struct{}

func (gone) signal(syscall.Signal) {}

func (gone) wait() syscall.WaitStatus { return syscall.WaitStatus(syscall.SIGKILL) }

func (gone) id() int { return 0 }

// describe says how a helper ended, as os.ProcessState does.
func describe(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("exit status %d", ws.ExitStatus())
	case ws.Signaled():
		return "signal: " + ws.Signal().String()
	}
	return fmt.Sprintf("wait status %#x", uint32(ws))
}

// cloneFlags are the namespaces of a command: user, pid, mount, IPC
// (no System V shared memory, semaphores or message queues shared with
// the host's processes), UTS, and network unless the command has it.
func cloneFlags(network bool) uintptr {
	f := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !network {
		f |= unix.CLONE_NEWNET
	}
	return f
}

// helperCmd is the helper's exec.Cmd: in new namespaces, the harness's
// uid and gid mapped to themselves, a session of its own (no controlling
// terminal), and SIGKILL when the harness's starting thread ends.
func helperCmd(mode string, network bool) *exec.Cmd {
	exe, _ := helperProgram()
	return helperCmdOf(exe, mode, network)
}

// helperCmdOf is helperCmd of the program exe.
func helperCmdOf(exe, mode string, network bool) *exec.Cmd {
	uid, gid := os.Getuid(), os.Getgid()
	return &exec.Cmd{
		Path: exe,
		Args: []string{"harness-sandbox"},
		Env:  helperEnviron(mode),
		Dir:  "/",
		SysProcAttr: &syscall.SysProcAttr{
			Cloneflags:  cloneFlags(network),
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			Setsid:      true,
			Pdeathsig:   syscall.SIGKILL,
		},
	}
}

// helperEnviron is the helper's whole environment: the variable that
// makes it one; GOMAXPROCS=1, since a helper has little to do at once
// and its runtime starts cheaper so (about a third of a millisecond of
// CPU per command); and, for a binary built with -race, GORACE without
// the exit sleep (a second by default) that would otherwise follow every
// command. None is a secret, and the command's environment is its own.
func helperEnviron(mode string) []string {
	race := "atexit_sleep_ms=0"
	if r := os.Getenv("GORACE"); r != "" {
		race = r + " " + race
	}
	return []string{helper.Env + "=" + helper.Value(mode), "GOMAXPROCS=1", "GORACE=" + race}
}

// Start starts the command: it checks the spec (Check), makes the
// command's private temporary directory, starts the helper and waits
// until the helper has set up the sandbox and started the shell. If ctx
// is done first, the helper is killed: Start returns nil when the shell
// had started by then (Wait says it was killed), else ctx's error. An
// error means the command did not run: ErrInvalidSpec, ErrUnavailable,
// ErrSetup (what failed is said), or ctx's error if it was done first.
func (c *Cmd) Start(ctx context.Context) error {
	if c.proc != nil {
		return errors.New("sandbox: Cmd already started")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sandbox: start: %w", err)
	}
	s := c.Spec
	if s.Mode == Off {
		return fmt.Errorf("%w: mode off runs no sandbox; the caller runs the command", ErrInvalidSpec)
	}
	// What the workspace's .git says is read once for the whole start:
	// the check and the request see the same paths.
	g := s.git()
	if err := s.validate(g); err != nil {
		return err
	}
	sup := Probe(s.SimulateMissing...)
	if err := sup.Err(); err != nil {
		return fmt.Errorf("mode %s: %w", s.Mode, err)
	}
	req, tmp, err := s.prepare(g, c.Line, c.Env, sup.LandlockABI)
	if err != nil {
		return err
	}
	req.Stdin = c.Stdin != nil
	p := &process{tmp: tmp, unlock: func() {}, ended: func() {}}
	// The nested stores to hide, and the nested repositories to keep
	// (workspace-write) or whose .git leads where a command could write
	// unobserved (refused): from the observer's reading taken since the
	// last command ended, when there is one; else from a walk.
	names := append(slices.Clone(s.HiddenNames), ".git")
	var rels []string
	ok := false
	if s.Nested != nil {
		rels, ok = s.Nested.begin(names)
		p.ended = sync.OnceFunc(s.Nested.end)
	}
	if !ok {
		rels = walkNamed(req.Dir, names)
	}
	var stores, gits []string
	for _, rel := range rels {
		if path.Base(rel) == ".git" {
			gits = append(gits, rel)
		} else if slices.Contains(s.HiddenNames, path.Base(rel)) {
			stores = append(stores, rel)
		}
	}
	keep := append([]string{req.Dir}, req.Writable...)
	for _, h := range nestedTargets(req.Dir, stores, keep) {
		if !slices.Contains(req.Hidden, h) {
			req.Hidden = append(req.Hidden, h)
		}
	}
	dirs, via, err := nestedGits(req.Dir, gits, g, req.Writable, s.Mode == WorkspaceWrite)
	if err != nil {
		p.cleanup()
		return err
	}
	pins, ro := keepNested(dirs)
	// Shallowest first, as pinsOf orders them: a pin made later above
	// one made before would hide it.
	req.Pins = append(append(slices.Clone(req.Pins), via...), pins...)
	slices.SortStableFunc(req.Pins, func(a, b string) int {
		return strings.Count(a, "/") - strings.Count(b, "/")
	})
	req.ReadOnly = append(slices.Clone(req.ReadOnly), ro...)
	err = p.start(ctx, c, req)
	if errors.Is(err, errLauncherLost) {
		// Nothing ran: once more, with a new launcher.
		p.release()
		err = p.start(ctx, c, req)
	}
	if err != nil {
		p.cleanup()
		return err
	}
	c.proc = p
	return nil
}

// prepare resolves what the helper needs and makes the temporary
// directory and the Go cache.
func (s Spec) prepare(g GitPaths, line string, env []string, abi int) (request, string, error) {
	if env == nil {
		env = os.Environ()
	}
	if s.GoCache != "" {
		if err := os.MkdirAll(s.GoCache, 0o700); err != nil {
			return request{}, "", fmt.Errorf("%w: the Go build cache: %v", ErrSetup, err)
		}
	}
	g = s.makeCovered(g, true)
	tmp, err := os.MkdirTemp("", TempPattern)
	if err != nil {
		return request{}, "", fmt.Errorf("%w: the command's temporary directory: %v", ErrSetup, err)
	}
	req := request{
		Line:     line,
		Dir:      s.Workspace,
		Env:      s.Environ(env, tmp),
		Writable: append(s.writableRootsOf(g), tmp),
		Refer:    s.referRootsOf(g),
		ReadOnly: s.readOnlyPathsOf(g),
		Hidden:   s.Hidden,
		Network:  s.Network,
		Proxy:    s.Proxied(),
		ABI:      min(abi, maxABI),
	}
	if s.Mode == WorkspaceWrite {
		req.Pins = pinsOf(g)
		req.Sealed = g.Sealed
	}
	return req, tmp, nil
}

// start starts the helper, gives it the request and waits for its first
// message.
func (p *process) start(ctx context.Context, c *Cmd, req request) error {
	l := launcherIfSmall()
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%w: encode the request: %v", ErrSetup, err)
	}
	pipe := func(what string) (r, w *os.File, err error) {
		if r, w, err = os.Pipe(); err != nil {
			return nil, nil, fmt.Errorf("%w: %s pipe: %v", ErrSetup, what, err)
		}
		return r, w, nil
	}
	var ends [6]*os.File // request, lifeline and status pipes: read, write
	for i, what := range []string{"request", "lifeline", "status"} {
		r, w, err := pipe(what)
		if err != nil {
			for _, f := range ends[:2*i] {
				f.Close()
			}
			return err
		}
		ends[2*i], ends[2*i+1] = r, w
	}
	reqR, reqW, lifeR, lifeW, statR, statW := ends[0], ends[1], ends[2], ends[3], ends[4], ends[5]
	h := helperCmd(helper.Run, req.Network)
	if c.Stdout != nil {
		h.Stdout = c.Stdout
	}
	if c.Stderr != nil {
		h.Stderr = c.Stderr
	}
	if c.Stdin != nil {
		h.Stdin = c.Stdin
	}
	h.ExtraFiles = []*os.File{reqR, lifeR, statW} // fds 3, 4, 5
	var proxyTheirs *os.File
	if req.Proxy {
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			for _, f := range ends {
				f.Close()
			}
			return fmt.Errorf("%w: the proxy's socket pair: %v", ErrSetup, err)
		}
		p.proxyCh, proxyTheirs = os.NewFile(uintptr(sp[0]), "proxy"), os.NewFile(uintptr(sp[1]), "proxy")
		h.ExtraFiles = append(h.ExtraFiles, proxyTheirs) // fd 6
	}
	// The request is in the pipe before the helper starts, so that it
	// need not wait for it (a request larger than the pipe's buffer is
	// written on as the helper reads). A helper that dies first ends the
	// write (EPIPE), and its first message (none) says so below.
	go func() {
		_, _ = reqW.Write(body)
		reqW.Close()
	}()
	var launchErr error
	if l != nil {
		p.helper, err = l.start(helperFiles(h), h.Env, req.Network)
		if errors.Is(err, errNotSent) {
			// The launcher was gone: no helper was started, and another
			// launcher is asked once.
			if l = launcherIfSmall(); l != nil {
				p.helper, err = l.start(helperFiles(h), h.Env, req.Network)
			}
		}
		p.early = true
		if err != nil {
			// The launcher could not start a helper, or is gone: a helper
			// it started has died with it. Whether that one started the
			// command first, the status pipe says (below), as for a
			// helper that dies.
			launchErr, err = err, nil
			p.helper, p.early = gone{}, false
		}
	} else {
		var unlock func()
		unlock, err = StartLocked(h)
		p.unlock = unlock
		if err == nil {
			p.helper = &child{cmd: h}
		}
	}
	// The helper has its own copies now: the harness keeps none of its
	// ends, or it would never see the status pipe's end of file.
	reqR.Close()
	lifeR.Close()
	statW.Close()
	if proxyTheirs != nil {
		proxyTheirs.Close()
	}
	if err != nil {
		lifeW.Close()
		statR.Close()
		return fmt.Errorf("%w: start the helper in new namespaces: %v", ErrSetup, err)
	}
	p.lifeline = lifeW
	msgs := make(chan message, 4)
	go readMessages(statR, msgs)
	p.msgs = msgs

	var first message
	var ok bool
	select {
	case first, ok = <-msgs:
	case <-ctx.Done():
		// The helper is killed; if it had started the shell already, the
		// command ran (and was killed): that is for Wait to report, as a
		// kill after Start would be.
		p.kill()
		if first, ok = <-msgs; ok && first.Started {
			return nil
		}
		p.reap()
		return ctx.Err()
	}
	switch {
	case ok && first.Started:
		if req.Proxy {
			// The helper sent the listener before it said it started.
			if err := p.serveProxy(c); err != nil {
				p.kill()
				p.reap()
				return fmt.Errorf("%w: %v", ErrSetup, err)
			}
		}
		return nil
	case ok && first.Error != "":
		p.kill()
		p.reap()
		return fmt.Errorf("%w: %s", ErrSetup, first.Error)
	case launchErr != nil:
		p.reap()
		if !ok {
			// No helper said a word: none ran the command.
			return fmt.Errorf("%w: %w: %v", ErrSetup, errLauncherLost, launchErr)
		}
		return fmt.Errorf("%w: %v", ErrSetup, launchErr)
	default:
		p.kill()
		state := p.reap()
		return fmt.Errorf("%w: the helper ended before it started the command (%v)", ErrSetup, state)
	}
}

// launcherIfSmall is the launcher that starts the helper, when the
// helper program is harness-sandbox and a launcher runs or can be
// started; else nil, and the harness starts the helper itself.
func launcherIfSmall() *launcher {
	if exe, small := helperProgram(); small {
		if l, err := launcherOf(exe); err == nil {
			return l
		}
	}
	return nil
}

// helperFiles are the helper's files as h has them: its stdin, stdout and
// stderr (/dev/null where h has none), then its extra files.
func helperFiles(h *exec.Cmd) []*os.File {
	files := make([]*os.File, 0, 3+len(h.ExtraFiles))
	for _, std := range []any{h.Stdin, h.Stdout, h.Stderr} {
		f, _ := std.(*os.File)
		if f == nil {
			f = devNull()
		}
		files = append(files, f)
	}
	return append(files, h.ExtraFiles...)
}

var devNull = sync.OnceValue(func() *os.File {
	f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		panic(fmt.Sprintf("sandbox: open %s: %v", os.DevNull, err))
	}
	return f
})

// readMessages sends the helper's messages on msgs, and closes it at the
// end of file: when the helper is gone.
func readMessages(r *os.File, msgs chan<- message) {
	defer close(msgs)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err == nil {
			msgs <- m
		}
	}
	_, _ = io.Copy(io.Discard, r) // a line too long: the rest
}

// kill kills the helper, and with it every process of the command: the
// helper is the first process of the command's PID namespace, and when
// it ends the kernel kills the rest. It may be called after the helper
// has ended.
func (p *process) kill() {
	if p.helper != nil {
		p.helper.signal(syscall.SIGKILL)
	}
}

// reap waits for the helper and says how it ended.
func (p *process) reap() string {
	ws := p.helper.wait()
	for range p.msgs {
	}
	return describe(ws)
}

// serveProxy takes the proxy's listening socket the helper made in the
// command's network namespace and serves it, outside the sandbox.
func (p *process) serveProxy(c *Cmd) error {
	var oob [64]byte
	var b [1]byte
	n, oobn, _, _, err := unix.Recvmsg(int(p.proxyCh.Fd()), b[:], oob[:], unix.MSG_CMSG_CLOEXEC)
	if err != nil || n != 1 {
		return fmt.Errorf("receive the proxy's socket from the helper: %v", cmpErr(err, "none sent"))
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return fmt.Errorf("receive the proxy's socket from the helper: %v", cmpErr(err, "no socket"))
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return fmt.Errorf("receive the proxy's socket from the helper: %v", cmpErr(err, "not one socket"))
	}
	f := os.NewFile(uintptr(fds[0]), "proxy")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("the proxy's socket: %v", err)
	}
	rules, err := netproxy.ParseRules(c.Spec.NetworkAllow)
	if err != nil {
		ln.Close()
		return err
	}
	p.proxy = &netproxy.Proxy{Rules: rules, Resolver: c.Resolver, Dial: c.Dial}
	go func() { _ = p.proxy.Serve(ln) }()
	return nil
}

// cmpErr is err, or an error saying what when err is nil.
func cmpErr(err error, what string) error {
	if err != nil {
		return err
	}
	return errors.New(what)
}

// errLauncherLost: the launcher was gone before any helper it may have
// started said a word; the command did not run.
var errLauncherLost = errors.New("the command did not start")

// release closes what a failed start left open, so that it may start
// again.
func (p *process) release() {
	if p.lifeline != nil {
		p.lifeline.Close()
	}
	if p.proxyCh != nil {
		p.proxyCh.Close()
	}
	p.lifeline, p.proxyCh, p.helper, p.early = nil, nil, nil, false
}

// cleanup closes the lifeline and the proxy, lets go of the starting
// thread and removes the temporary directory.
func (p *process) cleanup() {
	if p.lifeline != nil {
		p.lifeline.Close()
	}
	if p.proxy != nil {
		p.proxy.Close()
	}
	if p.proxyCh != nil {
		p.proxyCh.Close()
	}
	p.unlock()
	p.ended()
	removeAll(p.tmp)
}

// removeAll removes dir, making what the command left unwritable
// writable first if that is what stops it.
func removeAll(dir string) {
	if dir == "" || os.RemoveAll(dir) == nil {
		return
	}
	_ = filepathWalkChmod(dir)
	_ = os.RemoveAll(dir)
}

// Wait waits for the command to end — its shell, and with it every
// process it started, which the kernel kills when the helper ends — and
// removes its temporary directory. The error is not the command's: it
// says the sandbox failed (its helper ended without saying how the shell
// did); the Exit then is the helper's.
func (c *Cmd) Wait() (Exit, error) {
	p := c.proc
	if p == nil {
		return Exit{Code: -1}, errors.New("sandbox: Cmd not started")
	}
	p.waitOnce.Do(func() {
		var last *message
		for m := range p.msgs {
			if m.Exited {
				last = &m
				if p.early {
					break
				}
			} else if m.Error != "" && p.err == nil {
				p.err = fmt.Errorf("sandbox: %s", m.Error)
			}
		}
		var ws syscall.WaitStatus
		if last == nil || !p.early {
			ws = p.helper.wait()
		}
		switch {
		case last != nil:
			p.exit = Exit{Code: last.Code, Signal: syscall.Signal(last.Signal)}
			p.err = nil
		case ws.Signaled():
			p.exit = Exit{Code: -1, Signal: ws.Signal()}
		default:
			p.exit = Exit{Code: -1}
			if p.err == nil {
				p.err = fmt.Errorf("sandbox: the helper ended (%s) without the shell's exit", describe(ws))
			}
		}
		if p.proxy != nil {
			// Every process of the command is dead: what it had open
			// through the proxy is closed, or closed now.
			p.proxy.Close()
			n := connectionsRecord(p.proxy.Log())
			p.network = &n
		}
		p.cleanup()
	})
	return p.exit, p.err
}

// Kill kills the command: every process it started, whatever session,
// group or parent it has. It does nothing after the command ended, or
// before it started.
func (c *Cmd) Kill() {
	if c.proc != nil {
		c.proc.kill()
	}
}

// Terminate asks the command to stop: SIGTERM to every process it
// started, whatever session or group it has (its helper, the first
// process of the command's PID namespace, passes the signal on; it is
// sent to the helper, never to a process id that may have been reused).
// A command may ignore it: Kill is what ends it for sure. It does
// nothing after the command ended, or before it started.
func (c *Cmd) Terminate() {
	if c.proc != nil && c.proc.helper != nil {
		c.proc.helper.signal(syscall.SIGTERM)
	}
}

// Network is what the command did through its allow-list's proxy, once
// Wait returned: nil for a command without an allow-list, or one Wait
// has not returned for.
func (c *Cmd) Network() *facts.Network {
	if c.proc == nil || c.proc.network == nil {
		return nil
	}
	n := *c.proc.network
	return &n
}

// Pid is the helper's process id (in the harness's PID namespace), 0
// before Start.
func (c *Cmd) Pid() int {
	if c.proc == nil || c.proc.helper == nil {
		return 0
	}
	return c.proc.helper.id()
}

var (
	probed     Support
	probedOnce sync.Once
)

// probeSystem asks the kernel, once: the Landlock ABI, and a trial
// helper in new namespaces that mounts a /proc.
func probeSystem() Support {
	probedOnce.Do(func() { probed = probeKernel() })
	return probed
}

func probeKernel() Support {
	var s Support
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case errno == unix.ENOSYS:
		s.Missing = append(s.Missing, "Landlock is not in this kernel (landlock_create_ruleset: function not implemented; it needs Linux 5.13 or later)")
	case errno == unix.EOPNOTSUPP:
		s.Missing = append(s.Missing, "Landlock is disabled (add landlock to the kernel's lsm= boot parameter)")
	case errno != 0:
		s.Missing = append(s.Missing, fmt.Sprintf("Landlock: landlock_create_ruleset: %v", errno))
	case int(abi) < minABI:
		s.LandlockABI = int(abi)
		s.Missing = append(s.Missing, fmt.Sprintf("Landlock ABI %d is older than %d, the first that controls truncate (Linux 6.2)", abi, minABI))
	default:
		s.LandlockABI = int(abi)
	}
	// The helper program first: a harness-sandbox beside the executable
	// that passes the trial, else this program (tried then).
	var trial error
	chooseHelper(func(exe string) error {
		trial = trialHelper(exe)
		return trial
	})
	if exe, small := helperProgram(); !small {
		trial = trialHelper(exe)
	}
	if err := trial; err != nil {
		s.Missing = append(s.Missing, "user namespaces: "+err.Error())
	} else {
		s.UserNamespaces = true
	}
	return s
}

// trialHelper starts a helper in new user, PID, mount and network
// namespaces that only mounts a /proc, and reports why it failed.
func trialHelper(exe string) error {
	h := helperCmdOf(exe, helper.Probe, false)
	var out strings.Builder
	h.Stderr = &out
	h.WaitDelay = 5 * time.Second
	unlock, err := StartLocked(h)
	defer unlock()
	if err != nil {
		return fmt.Errorf("a process cannot be started in new user, PID, mount and network namespaces: %w "+
			"(see /proc/sys/user/max_user_namespaces, kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns)", err)
	}
	if err := h.Wait(); err != nil {
		return fmt.Errorf("a trial helper in new namespaces failed: %v: %s", err, strings.TrimSpace(out.String()))
	}
	return nil
}

// filepathWalkChmod makes every directory under dir writable by its owner,
// so that what it holds can be removed.
func filepathWalkChmod(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(path, 0o700)
		}
		return nil
	})
}
