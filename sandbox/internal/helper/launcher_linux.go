package helper

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// launcherMain is the launcher (mode Launch): a long-lived process, the
// harness's child, that starts each command's helper in new namespaces
// so that the harness, whose address space may be hundreds of MiB, does
// not fork with CLONE_NEWUSER itself (the Go runtime forks such a child
// without CLONE_VM, copying the page tables of the whole heap; the
// launcher's are a few MiB). Each helper is a fresh process of this
// program, in namespaces of its own, exactly as the harness would start
// it: the launcher shares nothing with it but this program's text, and
// hands it only the files the harness sent for it.
//
// It reads LaunchRequests on FDLauncher (a SOCK_SEQPACKET socket, one
// request a packet, the helper's files attached), answers each with a
// LaunchMessage (the helper's pidfd attached) and, when that helper has
// ended, another with its wait status. It ends when the harness's end of
// the socket closes (and, by its parent-death signal, with the harness);
// every helper it started then gets SIGKILL, by theirs.
func launcherMain() int {
	// Every helper's parent-death signal is sent when the thread that
	// started it ends: all are started from this thread, which never
	// ends before the process.
	runtime.LockOSThread()
	// Nothing the harness inherited without close-on-exec reaches a
	// helper, nor the launcher's own socket: it gets only the files of
	// its request.
	if err := unix.CloseRange(FDLauncher, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		fmt.Fprintln(os.Stderr, "sandbox launcher: close-on-exec:", err)
		return 1
	}
	l := &launcher{sock: FDLauncher, jobs: make(chan job, 16), gone: make(chan struct{})}
	go l.receive()
	for {
		// An idle spare is ended when its life is over: no helper waits
		// for hours, nor outlives by more than that a session that ran
		// no command since.
		var expired <-chan time.Time
		var timer *time.Timer
		if sp := l.spare; sp != nil {
			timer = time.NewTimer(time.Until(sp.born.Add(sp.life)))
			expired = timer.C
		}
		select {
		case <-l.gone:
			return 0 // the harness is gone
		case j := <-l.jobs:
			l.serve(j)
		case <-expired:
			l.spare.discard()
			l.spare = nil
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// maxLaunchRequest bounds a request's packet; maxLaunchFiles the files
// attached to it.
const (
	maxLaunchRequest = 64 << 10
	maxLaunchFiles   = 8
)

// launcher is the launcher's state.
type launcher struct {
	sock int
	// mu guards the socket's writes, so that a helper's start is always
	// answered before its end is. It is never held across a wait for a
	// helper.
	mu sync.Mutex
	// jobs is the main thread's work (requests, and what hand-overs leave
	// to it); gone is closed when the harness is.
	jobs chan job
	gone chan struct{}
	// spare is the helper started for the next request (see Spare), or
	// nil; only the launcher's main goroutine uses the field.
	spare *spare
}

// job is work for the launcher's main thread: a request to start a
// helper for (fds, its files, are the job's to close), or, with refill,
// only a spare to start for requests like req.
type job struct {
	req    LaunchRequest
	fds    []int
	anew   bool // a spare could not take it: a helper is started for it
	refill bool
}

// receive reads the harness's requests and hands them to the main
// thread, answering at once those that are not understood; it closes
// l.gone when the harness is gone.
func (l *launcher) receive() {
	defer close(l.gone)
	buf := make([]byte, maxLaunchRequest)
	oob := make([]byte, unix.CmsgSpace(4*maxLaunchFiles))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(l.sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		fds := receivedFiles(oob[:oobn])
		var req LaunchRequest
		err = json.Unmarshal(buf[:n], &req)
		switch {
		case err != nil:
			err = fmt.Errorf("read the request: %w", err)
		case flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0:
			err = fmt.Errorf("the request was cut")
		case len(fds) != 6 && len(fds) != 7:
			err = fmt.Errorf("the request has %d files, not 6 or 7", len(fds))
		}
		if err != nil {
			closeAll(fds)
			l.mu.Lock()
			l.send(LaunchMessage{ID: req.ID, Error: err.Error()}, -1)
			l.mu.Unlock()
			continue
		}
		l.jobs <- job{req: req, fds: fds}
	}
}

// serve does one job, on the main thread. A request is given to the
// spare when it is of its kind and fresh — the wait for the spare's
// answer is another goroutine's (handOver), so that a spare slow to
// answer holds up no other command — else a helper is started for it,
// and a spare for the next request when there is none.
func (l *launcher) serve(j job) {
	req := j.req
	if j.refill {
		if l.spare == nil {
			l.refill(req.Env, req.Network, req.SpareLife)
		}
		return
	}
	if sp := l.spare; sp != nil && !j.anew {
		l.spare = nil
		if sp.network == req.Network && slices.Equal(sp.env, req.Env) && sp.fresh(time.Now()) {
			go l.handOver(sp, req, j.fds)
			return
		}
		// It is of another kind (and the next spare is of this one), or
		// stale: a helper is started anew.
		sp.discard()
	}
	pid, pidfd, err := spawn(req.Env, j.fds, req.Network)
	closeAll(j.fds)
	l.mu.Lock()
	if err != nil {
		l.send(LaunchMessage{ID: req.ID, Error: "start the helper in new namespaces: " + err.Error()}, -1)
		l.mu.Unlock()
		return
	}
	l.send(LaunchMessage{ID: req.ID, Pid: pid}, pidfd)
	l.mu.Unlock()
	unix.Close(pidfd)
	go l.reap(req.ID, pid)
	if l.spare == nil {
		// The next command's helper, started now, while this one runs:
		// the same environment and network, which the harness asks for
		// command after command.
		l.refill(req.Env, req.Network, req.SpareLife)
	}
}

// handOver gives request req, with its files fds, to the spare sp and
// answers the harness, holding no lock while it waits for the spare. A
// spare gone before it took the files leaves the request to the main
// thread, which starts a helper for it.
func (l *launcher) handOver(sp *spare, req LaunchRequest, fds []int) {
	ok, err := sp.handOver(req.ID, fds)
	switch {
	case ok:
		closeAll(fds)
		sp.answer(l)
	case err != nil:
		closeAll(fds)
		sp.discard()
		l.mu.Lock()
		l.send(LaunchMessage{ID: req.ID, Error: err.Error()}, -1)
		l.mu.Unlock()
	default:
		sp.discard()
		l.jobs <- job{req: req, fds: fds, anew: true}
		return
	}
	// The spare served (or failed) this request: the next is made now.
	l.jobs <- job{req: req, refill: true}
}

// closeAll closes fds.
func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// spawn starts a helper, this program, with the environment env and the
// files fds (its fds 0, 1, 2, ...) in new user, PID and mount namespaces
// and, unless network, a new network namespace; it returns its pid and a
// pidfd. It must be called from the launcher's main thread, whose end is
// the helper's parent-death signal.
func spawn(env []string, fds []int, network bool) (int, int, error) {
	files := make([]uintptr, len(fds))
	for i, fd := range fds {
		files[i] = uintptr(fd)
	}
	uid, gid := os.Getuid(), os.Getgid()
	pidfd := -1
	// The namespaces of sandbox's cloneFlags.
	flagsNS := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNS | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !network {
		flagsNS |= unix.CLONE_NEWNET
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"harness-sandbox"}, &syscall.ProcAttr{
		Dir:   "/",
		Env:   env,
		Files: files,
		Sys: &syscall.SysProcAttr{
			Cloneflags:  flagsNS,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
			Setsid:      true,
			Pdeathsig:   syscall.SIGKILL,
			PidFD:       &pidfd,
		},
	})
	if err == nil && pidfd < 0 {
		// Without a pidfd the harness could signal a reused process id:
		// the helper is not run.
		_ = unix.Kill(pid, unix.SIGKILL)
		var ws unix.WaitStatus
		_, _ = unix.Wait4(pid, &ws, 0, nil)
		err = fmt.Errorf("no pidfd for the helper")
	}
	if err != nil {
		return 0, -1, err
	}
	return pid, pidfd, nil
}

// reap waits for the helper pid and tells the harness how it ended.
func (l *launcher) reap(id uint64, pid int) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.send(LaunchMessage{ID: id, Pid: pid, Ended: true, Status: int(ws)}, -1)
}

// send writes m, with the file fd when it is not -1. A failed write
// means the harness is gone: the launcher ends, and with it its helpers.
func (l *launcher) send(m LaunchMessage, fd int) {
	b, _ := json.Marshal(m)
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	if err := unix.Sendmsg(l.sock, b, oob, nil, 0); err != nil {
		os.Exit(0)
	}
}

// receivedFiles are the descriptors in a packet's control messages.
func receivedFiles(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		got, err := unix.ParseUnixRights(&msgs[i])
		if err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}
