package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/seed-7cc7a084/harness/sandbox/internal/helper"
)

// The launcher: with harness-sandbox as the helper program, one
// long-lived harness-sandbox per process (mode helper.Launch) starts
// every command's helper, in new namespaces, from its own small address
// space. The Go runtime forks a child with CLONE_NEWUSER without
// CLONE_VM — copying the page tables of the whole heap, then taking a
// copy-on-write fault for each page the harness writes while the child
// execs — so a harness holding a few hundred MiB paid tens of
// milliseconds per command for the fork alone; a process without
// namespaces (the launcher) is started with vfork. Each helper is still
// a fresh process in namespaces of its own, started exactly as the
// harness would (see helper.LaunchRequest): nothing passes from one
// command to the next.

// errLauncher: the launcher could not start a helper, or is gone.
var errLauncher = errors.New("the sandbox launcher")

// errNotSent: a request never reached the launcher (it is gone), so no
// helper was started for it.
var errNotSent = errors.New("the request was not sent")

// launcher is the harness's end of a running launcher.
type launcher struct {
	exe  string // the program it runs
	conn *net.UnixConn
	mu   sync.Mutex // guards what follows
	dead error      // why it is gone; nil while it runs
	// retired: another program is the helper now (only tests choose
	// again); this launcher ends once its helpers have.
	retired bool
	next    uint64
	// starting are the requests not answered yet; running the helpers
	// started and not ended, by request.
	starting map[uint64]chan launchAnswer
	running  map[uint64]*launched
}

// launchAnswer is the launcher's answer to a request.
type launchAnswer struct {
	h   *launched
	err error
}

// spareLife is how long the spare helper the launcher starts after a
// command waits for the next before it is ended (helper.LaunchRequest's
// SpareLife); zero is the launcher's bound, 30 s. Only tests shorten it.
var spareLife atomic.Int64

var (
	launcherMu sync.Mutex // guards theLauncher
	// theLauncher is this process's launcher, started at the first
	// command run with harness-sandbox; another is started when it is
	// gone.
	theLauncher *launcher
)

// launcherOf returns the running launcher of the program exe (the loaded
// harness-sandbox), starting one if there is none.
func launcherOf(exe string) (*launcher, error) {
	launcherMu.Lock()
	defer launcherMu.Unlock()
	if l := theLauncher; l != nil {
		l.mu.Lock()
		dead := l.dead
		if dead == nil && l.exe != exe {
			l.retired = true
			l.endIfIdle()
		}
		l.mu.Unlock()
		if dead == nil && l.exe == exe {
			return l, nil
		}
	}
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: socket pair: %v", errLauncher, err)
	}
	ours, theirs := os.NewFile(uintptr(sp[0]), "launcher"), os.NewFile(uintptr(sp[1]), "launcher")
	c, err := net.FileConn(ours)
	ours.Close()
	if err != nil {
		theirs.Close()
		return nil, fmt.Errorf("%w: %v", errLauncher, err)
	}
	cmd := &exec.Cmd{
		Path:       exe,
		Args:       []string{HelperName},
		Env:        helperEnviron(helper.Launch),
		Dir:        "/",
		ExtraFiles: []*os.File{theirs}, // fd 3: helper.FDLauncher
		// Its own session (no terminal's signals), and SIGKILL when the
		// thread that started it ends: that thread stays locked until
		// the launcher is gone (StartLocked).
		SysProcAttr: &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL},
	}
	unlock, err := StartLocked(cmd)
	theirs.Close()
	if err != nil {
		unlock()
		c.Close()
		return nil, fmt.Errorf("%w: start %s: %v", errLauncher, HelperName, err)
	}
	l := &launcher{exe: exe, conn: c.(*net.UnixConn), starting: map[uint64]chan launchAnswer{}, running: map[uint64]*launched{}}
	go l.read()
	go func() {
		_ = cmd.Wait()
		unlock()
		l.conn.Close() // ends read, which ends what is waiting
	}()
	theLauncher = l
	return l, nil
}

// start asks the launcher to start a helper with files (stdin, stdout,
// stderr, request, lifeline, status and, with a proxy, the proxy's
// socket) and environment env, in the harness's network namespace when
// network.
func (l *launcher) start(files []*os.File, env []string, network bool) (*launched, error) {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	l.mu.Lock()
	if l.dead != nil {
		err := l.dead
		l.mu.Unlock()
		return nil, err
	}
	l.next++
	id := l.next
	ch := make(chan launchAnswer, 1)
	l.starting[id] = ch
	l.mu.Unlock()
	// Not written under l.mu: read, which delivers the answers, takes
	// it, and must go on reading for the launcher to go on.
	body, err := json.Marshal(helper.LaunchRequest{ID: id, Network: network, Env: env, SpareLife: time.Duration(spareLife.Load())})
	if err == nil {
		_, _, err = l.conn.WriteMsgUnix(body, unix.UnixRights(fds...), nil)
	}
	if err != nil {
		// The launcher is gone (or cannot be spoken to): no other request
		// goes to it.
		l.conn.Close()
		l.mu.Lock()
		_, waiting := l.starting[id]
		delete(l.starting, id)
		if l.dead == nil {
			l.dead = fmt.Errorf("%w: %v", errLauncher, err)
		}
		l.mu.Unlock()
		if waiting {
			return nil, fmt.Errorf("%w: %w: %v", errLauncher, errNotSent, err)
		}
		// read failed it meanwhile (the launcher is gone), and said so.
	}
	a := <-ch
	return a.h, a.err
}

// read reads the launcher's messages until it is gone, then fails what
// waits on it.
func (l *launcher) read() {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(4))
	var why error
	for {
		n, oobn, flags, _, err := l.conn.ReadMsgUnix(buf, oob)
		fds := receivedFDs(oob[:oobn])
		if err != nil || n == 0 {
			closeFDs(fds)
			why = fmt.Errorf("%w is gone (%v)", errLauncher, cmpErr(err, "end of file"))
			break
		}
		var m helper.LaunchMessage
		if err := json.Unmarshal(buf[:n], &m); err != nil || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
			closeFDs(fds)
			why = fmt.Errorf("%w said what is not understood", errLauncher)
			break
		}
		l.deliver(m, fds)
	}
	l.conn.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dead = why
	for id, ch := range l.starting {
		ch <- launchAnswer{err: why}
		delete(l.starting, id)
	}
	for id, h := range l.running {
		// Its parent-death signal has killed the helper (and with it the
		// command), or is killing it.
		h.end(syscall.WaitStatus(syscall.SIGKILL))
		delete(l.running, id)
	}
}

// deliver hands one message to whom it is for.
func (l *launcher) deliver(m helper.LaunchMessage, fds []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.endIfIdle()
	if m.Ended {
		closeFDs(fds)
		if h := l.running[m.ID]; h != nil {
			delete(l.running, m.ID)
			h.end(syscall.WaitStatus(m.Status))
		}
		return
	}
	ch := l.starting[m.ID]
	if ch == nil {
		closeFDs(fds)
		return
	}
	delete(l.starting, m.ID)
	switch {
	case m.Error != "":
		closeFDs(fds)
		ch <- launchAnswer{err: fmt.Errorf("%w: %s", errLauncher, m.Error)}
	case len(fds) != 1 || m.Pid <= 0:
		closeFDs(fds)
		ch <- launchAnswer{err: fmt.Errorf("%w: no pidfd for helper %d", errLauncher, m.Pid)}
	default:
		h := &launched{pid: m.Pid, pidfd: fds[0], done: make(chan struct{})}
		l.running[m.ID] = h
		ch <- launchAnswer{h: h}
	}
}

// endIfIdle ends a retired launcher that has no helper left; l.mu is
// held.
func (l *launcher) endIfIdle() {
	if l.retired && len(l.running) == 0 && len(l.starting) == 0 {
		l.conn.Close()
	}
}

// launched is a helper the launcher started.
type launched struct {
	pid  int
	done chan struct{} // closed when it has ended
	mu   sync.Mutex    // guards what follows
	// pidfd signals it (never a process id, which may be reused); -1
	// once it has ended.
	pidfd  int
	status syscall.WaitStatus
}

// end records that the helper ended with status ws.
func (h *launched) end(ws syscall.WaitStatus) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pidfd < 0 {
		return
	}
	unix.Close(h.pidfd)
	h.pidfd, h.status = -1, ws
	close(h.done)
}

func (h *launched) signal(sig syscall.Signal) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pidfd >= 0 {
		_ = unix.PidfdSendSignal(h.pidfd, sig, nil, 0)
	}
}

func (h *launched) wait() syscall.WaitStatus {
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.status
}

func (h *launched) id() int { return h.pid }

// receivedFDs are the descriptors in a message's control messages.
func receivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// closeFDs closes fds.
func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
