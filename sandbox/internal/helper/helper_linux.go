package helper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// RunIfAsked turns this process into the helper when Env says it is one,
// and never returns then; otherwise it returns at once. The variable is
// removed first. Package sandbox calls it from its init, before the
// program's main, in any program that imports it; harness-sandbox calls
// it from its main.
func RunIfAsked() {
	v, ok := os.LookupEnv(Env)
	if !ok {
		return
	}
	os.Unsetenv(Env)
	mode, proto, _ := strings.Cut(v, ":")
	if proto != strconv.Itoa(Protocol) {
		fmt.Fprintf(os.Stderr, "sandbox helper: asked for protocol %q, speaks %d (install the harness-sandbox of the same build as harness)\n", proto, Protocol)
		os.Exit(ExitProtocol)
	}
	switch mode {
	case Run:
		os.Exit(helperMain(prepared{}))
	case Launch:
		os.Exit(launcherMain())
	case Spare, SpareNetwork:
		os.Exit(spareMain(mode == SpareNetwork))
	case Probe:
		if err := setupProc(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	default:
		fmt.Fprintf(os.Stderr, "sandbox helper: unknown mode %q\n", mode)
		os.Exit(ExitProtocol)
	}
}

// helperMain is the helper, the first process (pid 1) of the command's
// PID namespace: it sets up the sandbox, starts the shell, reaps every
// process that is left to it as an init does, reports the shell's exit
// and ends — and with it, by the kernel, every process of the command.
//
// pre is what it did before (a spare, see spareMain).
func helperMain(pre prepared) int {
	status := os.NewFile(FDStatus, "status")
	say := func(m Message) {
		line, _ := json.Marshal(m)
		_, _ = status.Write(append(line, '\n'))
	}
	// No one of the command may read this process's memory or files
	// (/proc/1/environ, /proc/1/fd): it is not dumpable.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if !pre.spare {
		catchSignals()
	}
	// The lifeline: its end of file means the harness is gone (its
	// parent-death signal covers the same; this does not depend on it).
	go func() {
		_, _ = io.Copy(io.Discard, os.NewFile(FDLifeline, "lifeline"))
		os.Exit(3)
	}()

	var req Request
	if err := json.NewDecoder(os.NewFile(FDRequest, "request")).Decode(&req); err != nil {
		say(Message{Error: "read the request: " + err.Error()})
		return 1
	}
	if err := setup(req, pre); err != nil {
		say(Message{Error: err.Error()})
		return 1
	}
	// The harness hears that the command started before any of it runs:
	// the helper says so just before it forks the shell. A Start
	// cancelled meanwhile therefore never takes a command that ran for one
	// that did not; a fork that fails after it is an error Wait reports.
	pid, err := startShell(req, func() { say(Message{Started: true}) })
	if err != nil {
		say(Message{Error: err.Error()})
		return 1
	}
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			say(Message{Error: "wait for the shell: " + err.Error()})
			return 1
		}
		if wpid != pid {
			continue // an orphan, reaped
		}
		m := Message{Exited: true, Code: ws.ExitStatus()}
		if ws.Signaled() {
			m.Code, m.Signal = -1, int(ws.Signal())
		}
		endAll()
		say(m)
		return 0
	}
}

// catchSignals takes the signals a command may send the helper.
func catchSignals() {
	// Signals from inside the namespace reach pid 1 only if it handles
	// them, and the Go runtime handles all: those it would exit or crash
	// on are taken here and dropped (the others it already ignores when
	// they come from kill). SIGKILL from the harness still ends it. With
	// Landlock ABI 6 the command cannot signal the helper at all; this is
	// for older kernels. (Handled signals are reset to default in the
	// shell at exec; ignored ones would not be. Notify with no signal
	// would also do, but costs a millisecond.)
	//
	// SIGTERM alone is passed on, to every process of the namespace (kill
	// -1 from its first process spares only the helper): it is how the
	// harness asks the command to stop before it kills it (Cmd.Terminate).
	// A command that sends it here gains nothing: it could signal its own
	// processes itself.
	sigs := make(chan os.Signal, 64)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGILL,
		syscall.SIGTRAP, syscall.SIGABRT, syscall.SIGSYS, syscall.SIGSTKFLT)
	go func() {
		for s := range sigs {
			if s == syscall.SIGTERM {
				_ = unix.Kill(-1, unix.SIGTERM)
			}
		}
	}()
}

// endAll kills every other process of the command's PID namespace and
// reaps them: once it returns, this helper is the namespace's last
// process, and the harness may take the command for ended before the
// helper's own exit (the namespaces' teardown) is done. A process forked
// while the signal is sent gets it too (a signal to all is delivered to
// a fork in progress); the loop ends when no child is left.
func endAll() {
	for {
		_ = unix.Kill(-1, unix.SIGKILL) // all but the caller, from pid 1
		var ws unix.WaitStatus
		_, err := unix.Wait4(-1, &ws, 0, nil)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return // ECHILD: none is left
		}
	}
}

// setupProc makes the mount namespace's mounts private and mounts a fresh
// /proc: it shows only the command's PID namespace, not the harness's
// processes, their environments or their files.
func setupProc() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount a /proc of the new PID namespace: %w", err)
	}
	return nil
}

// setup builds the command's view of the file system, and its network;
// pre is what a spare did of it before the request came.
func setup(req Request, pre prepared) error {
	if pre.spare {
		if pre.err != nil {
			return pre.err
		}
		if req.Network != pre.network {
			return fmt.Errorf("a helper made for network %v asked to run a command with network %v", pre.network, req.Network)
		}
	} else if err := setupProc(); err != nil {
		return err
	}
	// Pins first: the read-only binds below are made inside them.
	for _, p := range req.Pins {
		if err := pin(p); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("pin %s: %w", p, err)
		}
	}
	for _, p := range req.Sealed {
		if err := seal(p); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("seal %s: %w", p, err)
		}
	}
	for _, p := range req.ReadOnly {
		if err := bindReadOnly(p, p); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("make %s read-only: %w", p, err)
		}
	}
	for _, p := range req.Hidden {
		if err := hide(p); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("hide %s: %w", p, err)
		}
	}
	if !req.Network && !pre.spare {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("bring up the loopback interface: %w", err)
		}
	}
	if req.Proxy && !req.Network {
		if err := sendProxyListener(); err != nil {
			return fmt.Errorf("the proxy's socket: %w", err)
		}
	}
	return nil
}

// sendProxyListener listens on 127.0.0.1:ProxyPort of the command's
// network namespace and sends the socket to the harness on FDProxy,
// keeping no copy: the harness accepts on it, outside the sandbox, and
// nothing of the command's can close it or listen there.
func sendProxyListener() error {
	ch := os.NewFile(FDProxy, "proxy")
	defer ch.Close()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: ProxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("bind 127.0.0.1:%d: %w", ProxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := unix.Sendmsg(int(ch.Fd()), []byte{'L'}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("send it to the harness: %w", err)
	}
	return nil
}

// pin bind-mounts path onto itself: a mount point cannot be renamed or
// removed (EBUSY), so what a name there leads to stays. A symbolic link
// is pinned itself, without following it (open_tree and move_mount
// follow no last link unless told to).
func pin(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return unix.Mount(path, path, "", unix.MS_BIND, "")
	}
	fd, err := unix.OpenTree(unix.AT_FDCWD, path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}

// hide covers path: a directory with an empty, read-only tmpfs that no
// one may list (mode 000); anything else with /dev/null (it reads as
// empty, and what is written to it goes nowhere).
func hide(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,nr_inodes=1,mode=000")
	}
	return bindReadOnly("/dev/null", path)
}

// seal makes the directory dir read-only (see Request.Sealed), then each
// directory in it writable again, in a mount of its own.
func seal(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	if err := bindReadOnly(dir, dir); err != nil {
		return err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := unix.Mount(p, p, "", unix.MS_BIND, ""); err != nil {
			return err
		}
		if err := remount(p, false); err != nil {
			return err
		}
	}
	return nil
}

// bindReadOnly bind-mounts src on dst and makes that mount read-only.
func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return remount(dst, true)
}

// remount makes the bind mount at dst read-only, or writable. A remount
// in a user namespace must keep the flags the kernel locked on the mount
// it came from (nosuid, nodev, noexec, the atime flags), so they are read
// and kept.
func remount(dst string, readOnly bool) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dst, &st); err != nil {
		return err
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT)
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	return unix.Mount("", dst, "", flags, "")
}

// loopbackUp brings up lo in the new network namespace, so that a
// command's own local servers (a test's httptest) work.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// startShell starts sh -c LINE in the workspace from a new OS thread that
// first takes the command's credentials: no_new_privs, the Landlock
// domain, no capabilities. The child inherits that thread's credentials;
// the thread is never handed back to the Go runtime (the goroutine ends
// locked to it, which ends the thread), so the helper's other threads
// keep theirs. starting is called once nothing but the fork is left.
func startShell(req Request, starting func()) (int, error) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer devnull.Close()
	stdin := devnull.Fd()
	if req.Stdin {
		stdin = 0 // the helper's own: Cmd.Stdin
	}
	// Nothing of the helper's but stdin, stdout and stderr reaches the
	// shell: not the request, the lifeline, the status pipe, nor what the
	// harness inherited without close-on-exec (a terminal, say).
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return 0, fmt.Errorf("close-on-exec: %w", err)
	}
	type started struct {
		pid int
		err error
	}
	ch := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			ch <- started{err: fmt.Errorf("no_new_privs: %w", err)}
			return
		}
		if err := restrict(req); err != nil {
			ch <- started{err: fmt.Errorf("landlock: %w", err)}
			return
		}
		if err := dropCapabilities(); err != nil {
			ch <- started{err: fmt.Errorf("drop capabilities: %w", err)}
			return
		}
		starting()
		pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", req.Line}, &syscall.ProcAttr{
			Dir:   req.Dir,
			Env:   req.Env,
			Files: []uintptr{stdin, 1, 2},
			// In the helper's session and group, not a group leader: as
			// an unsandboxed shell is in its watcher's group, so that a
			// command sees the same (setsid does not fork; "kill 0"
			// signals the command, and the helper ignores it).
		})
		if err != nil {
			err = fmt.Errorf("start /bin/sh in %s: %w", req.Dir, err)
		}
		ch <- started{pid, err}
	}()
	s := <-ch
	return s.pid, s.err
}

// The secure bits that keep uid 0 from regaining capabilities at exec
// (linux/securebits.h): noroot, no_setuid_fixup, keep_caps and
// no_cap_ambient_raise, each locked.
const securebits = 0xff

// dropCapabilities leaves the calling thread, and so the shell it
// starts, with no capability in the user namespace: none permitted,
// effective, inheritable or ambient, an empty bounding set, and uid 0
// not special at exec. Without it a command — uid 0 inside when the
// harness runs as root — could unmount what hides the store.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, securebits, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; ; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) && c > 0 {
				break // past the last capability
			}
			return fmt.Errorf("bounding set, capability %d: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
	}
	var data [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// within reports whether path is dir or lies beneath it.
func within(path, dir string) bool {
	if path == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}
