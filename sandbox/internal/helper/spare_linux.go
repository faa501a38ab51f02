package helper

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// spareMain is a spare helper (mode Spare): it waits for its files from
// the launcher, puts them in place and is then the helper, as one
// started with them would be. It ends at once, having run nothing, when
// the launcher is gone or sends what is not a helper's files.
//
// network says which network setting it was made for: the harness's
// network namespace, or one of its own.
func spareMain(network bool) int {
	// Not dumpable from the start: nothing may read this process's
	// memory, before its command or after.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	pre := prepared{spare: true, network: network}
	// What no request says is done before one comes, so that a command's
	// start does not wait for it: the signals taken, the mounts made
	// private and a /proc of the new PID namespace mounted, the loopback
	// interface of a network namespace of its own brought up, and the
	// decoding of a request and encoding of a message warmed up (their
	// first use costs a few hundred microseconds). A failure is the
	// command's error, when it comes.
	catchSignals()
	pre.err = setupProc()
	if pre.err == nil && !pre.network {
		if err := loopbackUp(); err != nil {
			pre.err = fmt.Errorf("bring up the loopback interface: %w", err)
		}
	}
	var warm Request
	_ = json.Unmarshal([]byte(`{"line":"","dir":"","env":[],"writable":[],"refer":[],"read_only":[],"pins":[],"hidden":[],"hidden_names":[],"network":false,"proxy":false,"abi":0,"stdin":false}`), &warm)
	_, _ = json.Marshal(Message{Started: true})
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4*maxLaunchFiles))
	var n, oobn, flags int
	var err error
	for {
		n, oobn, flags, _, err = unix.Recvmsg(FDSpare, b[:], oob, unix.MSG_CMSG_CLOEXEC)
		if err != unix.EINTR {
			break
		}
	}
	fds := receivedFiles(oob[:oobn])
	if err != nil || n != 1 || b[0] != spareGo || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 || (len(fds) != 6 && len(fds) != 7) {
		return 0 // the launcher is gone, or this is not for a helper: nothing ran
	}
	// The launcher hears that this spare has the files, alive, before it
	// tells the harness the command's helper started; it goes on only
	// once that is said (a spare dying meanwhile is replaced).
	if _, err := unix.Write(FDSpare, []byte{spareAck}); err != nil {
		return 0
	}
	// Each file to a descriptor above every one it will take, then to its
	// place: fd i is the i-th file (fd 3, the socket, is replaced by the
	// request's pipe, which closes it).
	high := make([]int, len(fds))
	for i, fd := range fds {
		h, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 64)
		if err != nil {
			return 1
		}
		high[i] = h
		unix.Close(fd)
	}
	for i, h := range high {
		if err := unix.Dup3(h, i, 0); err != nil {
			return 1
		}
		unix.Close(h)
	}
	return helperMain(pre)
}

// spareGo is the byte of the packet that hands a spare its files;
// spareAck the spare's answer that it has them.
const (
	spareGo  = 'G'
	spareAck = 'A'
)

// prepared is what a helper did before its request came: nothing, or,
// for a spare, what no request says (see spareMain).
type prepared struct {
	spare   bool
	network bool  // the spare shares the harness's network namespace
	err     error // what failed of it
}

// spareAckWait bounds how long the launcher waits for a spare's answer.
const spareAckWait = 10 * time.Second

// spareMaxAge is how old a spare may be and still serve a command; an
// older one is discarded and the command's helper started anew, and one
// left unused that long is ended (LaunchRequest.SpareLife may shorten
// it, never lengthen it).
const spareMaxAge = 30 * time.Second

// spare is a spare helper the launcher started (see Spare).
type spare struct {
	pid     int
	sock    int      // the launcher's end of the spare's socket
	env     []string // the environment asked for: mode Run
	network bool
	// mounts is the launcher's /proc/self/mountinfo, opened just before
	// the spare was made: the kernel marks it (POLLPRI) once the mount
	// table the spare copied has changed.
	mounts int
	born   time.Time
	life   time.Duration // how long it may wait for a request
	mu     sync.Mutex    // guards what follows
	// pidfd signals it; -1 once it is discarded or handed to the
	// harness (closed).
	pidfd  int
	dead   bool // it has ended
	status unix.WaitStatus
	id     uint64 // the request it serves; 0 before it has one
	// answered: the harness has been told it started request id, so
	// that its end may be told (after, never before).
	answered bool
}

// refill starts a spare helper for requests of the environment env (of
// mode Run) and network, from the launcher's main thread, to wait for
// one at most life (at most spareMaxAge). Nothing is started when env
// does not say mode Run, or the start fails: the next request's helper
// is then started when it comes, as without spares.
func (l *launcher) refill(env []string, network bool, life time.Duration) {
	if life <= 0 || life > spareMaxAge {
		life = spareMaxAge
	}
	runValue, spareValue := Env+"="+Value(Run), Env+"="+Value(Spare)
	if network {
		spareValue = Env + "=" + Value(SpareNetwork)
	}
	i := slices.Index(env, runValue)
	if i < 0 {
		return
	}
	spareEnv := slices.Clone(env)
	spareEnv[i] = spareValue
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	// Opened before the spare copies the mount table, so that a change
	// made while it is being made marks it too.
	mounts, err := unix.Open("/proc/self/mountinfo", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(sp[0])
		unix.Close(sp[1])
		return
	}
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(mounts)
		unix.Close(sp[0])
		unix.Close(sp[1])
		return
	}
	// Its fds 0 to 6, which its files will take, are held from its start
	// (sp[1] as FDSpare, /dev/null on the others), so that nothing the Go
	// runtime opens at its start and keeps (the cgroup's CPU limit files)
	// lies where a file of the command's is put.
	pid, pidfd, err := spawn(spareEnv, []int{null, null, null, sp[1], null, null, null}, network)
	unix.Close(null)
	unix.Close(sp[1])
	if err != nil {
		unix.Close(mounts)
		unix.Close(sp[0])
		return
	}
	s := &spare{pid: pid, pidfd: pidfd, sock: sp[0], env: slices.Clone(env), network: network,
		mounts: mounts, born: time.Now(), life: life}
	l.spare = s
	go l.reapSpare(s)
}

// fresh reports whether the spare may still serve a command: the mount
// table it copied when it was made is still the harness's (a volume
// unmounted since must not stay visible to a command, nor one mounted
// since stay hidden from it), and its life is not over.
func (s *spare) fresh(now time.Time) bool {
	if now.Sub(s.born) >= s.life {
		return false
	}
	pfd := []unix.PollFd{{Fd: int32(s.mounts), Events: unix.POLLPRI}}
	for {
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			continue
		}
		return err == nil && n == 0
	}
}

// handOver gives the spare the files of request id, and waits for its
// answer, holding no lock meanwhile: true when it has them, and it is
// then that request's helper (see answer). On false with no error it
// never ran anything (it was gone, or died before it answered): the
// caller discards it and starts a helper anew. An error means it did not
// answer in time: it is killed, and the request fails (it might have
// gone on with the files after all). Only one goroutine hands a spare
// over, once; no other uses its socket meanwhile.
func (s *spare) handOver(id uint64, fds []int) (bool, error) {
	s.mu.Lock()
	dead := s.dead
	s.mu.Unlock()
	if dead || unix.Sendmsg(s.sock, []byte{spareGo}, unix.UnixRights(fds...), nil, unix.MSG_NOSIGNAL) != nil {
		return false, nil
	}
	// A spare that is dying may still take the packet (its socket lives
	// until the last of its threads has ended): its answer, or the end of
	// file once it is gone, says which.
	pfd := []unix.PollFd{{Fd: int32(s.sock), Events: unix.POLLIN}}
	deadline := time.Now().Add(spareAckWait)
	for {
		// A wait past the deadline is the deadline's end (a negative
		// timeout would be poll's "for ever"), and one under a
		// millisecond is a millisecond, not a poll that returns at once.
		left := time.Until(deadline)
		if left <= 0 {
			s.kill()
			return false, fmt.Errorf("the spare helper did not answer (in time)")
		}
		n, err := unix.Poll(pfd, max(1, int(left.Milliseconds())))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			s.kill()
			return false, fmt.Errorf("the spare helper did not answer (%v)", cmpErr(err, "in time"))
		}
		break
	}
	var b [1]byte
	n, _, _, _, err := unix.Recvmsg(s.sock, b[:], nil, unix.MSG_DONTWAIT)
	if err != nil || n != 1 || b[0] != spareAck {
		return false, nil // gone before it answered: it ran nothing
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	unix.Close(s.sock)
	s.sock = -1
	unix.Close(s.mounts)
	s.mounts = -1
	s.id = id
	return true, nil
}

// answer tells the harness that the spare, handed over, is the helper of
// its request (its pidfd attached) and, when it has ended already, how;
// reapSpare tells that otherwise. Both take l.mu, then s.mu: which runs
// second tells the end, after the start.
func (s *spare) answer(l *launcher) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	l.send(LaunchMessage{ID: s.id, Pid: s.pid}, s.pidfd)
	unix.Close(s.pidfd)
	s.pidfd = -1
	s.answered = true
	if s.dead {
		l.send(LaunchMessage{ID: s.id, Pid: s.pid, Ended: true, Status: int(s.status)}, -1)
	}
}

// kill sends the spare SIGKILL, unless its pidfd is closed.
func (s *spare) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pidfd >= 0 {
		_ = unix.PidfdSendSignal(s.pidfd, unix.SIGKILL, nil, 0)
	}
}

// cmpErr is err, or an error saying what when err is nil.
func cmpErr(err error, what string) error {
	if err != nil {
		return err
	}
	return errors.New(what)
}

// discard kills a spare that serves no request (its end of the socket
// closing ends it too, before it runs anything).
func (s *spare) discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pidfd >= 0 {
		_ = unix.PidfdSendSignal(s.pidfd, unix.SIGKILL, nil, 0)
		unix.Close(s.pidfd)
		s.pidfd = -1
	}
	if s.sock >= 0 {
		unix.Close(s.sock)
		s.sock = -1
	}
	if s.mounts >= 0 {
		unix.Close(s.mounts)
		s.mounts = -1
	}
}

// reapSpare waits for the spare s and, when it served a request, tells
// the harness how it ended.
func (l *launcher) reapSpare(s *spare) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(s.pid, &ws, 0, nil)
		if err != unix.EINTR {
			break
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dead, s.status = true, ws
	if s.answered {
		// Else it served none, or answer tells its end after its start.
		l.send(LaunchMessage{ID: s.id, Pid: s.pid, Ended: true, Status: int(ws)}, -1)
	}
}
