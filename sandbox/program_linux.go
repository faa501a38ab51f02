package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// maxHelperSize bounds the helper program that is loaded: a few MiB are
// expected.
const maxHelperSize = 64 << 20

// The program each command's helper runs, chosen once per process (see
// chooseHelper).
var (
	helperMu sync.Mutex // guards what follows
	// helperAt is where the helper program is looked for; "" looks beside
	// the executable. Only this package's tests change it.
	helperAt string
	// helperExe is the path the helper is executed by: /proc/self/fd/N
	// of the loaded harness-sandbox, or /proc/self/exe; "" before the
	// choice.
	helperExe string
	// helperWhy says why the helper is this program re-executed: no
	// harness-sandbox, or one not fit to run.
	helperWhy  string
	helperFile *os.File // the loaded harness-sandbox, kept open
)

// helperProgram returns the path the helper is executed by, and whether
// it is harness-sandbox; chooseHelper must have run (Probe runs it).
func helperProgram() (string, bool) {
	helperMu.Lock()
	defer helperMu.Unlock()
	if helperExe == "" {
		return "/proc/self/exe", false
	}
	return helperExe, helperFile != nil
}

// chooseHelper chooses the helper program, once per process, before any
// command runs (Probe calls it, and every start probes first): the
// harness-sandbox beside the executable when there is one fit to run,
// loaded into a sealed memory file, so that nothing written to its path
// later — by a command of this process, say, where the harness lives in a
// workspace — is ever executed; else this program itself. try runs a
// trial helper with a program; a harness-sandbox that fails it (one of
// another protocol, from another build) is not chosen.
func chooseHelper(try func(exe string) error) {
	helperMu.Lock()
	defer helperMu.Unlock()
	if helperExe != "" {
		return
	}
	helperExe = "/proc/self/exe"
	path := helperAt
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			helperWhy = fmt.Sprintf("no %s: the executable: %v", HelperName, err)
			return
		}
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		path = filepath.Join(filepath.Dir(exe), HelperName)
	}
	f, err := loadHelper(path)
	if err != nil {
		helperWhy = err.Error()
		return
	}
	exe := "/proc/self/fd/" + strconv.Itoa(int(f.Fd()))
	if err := try(exe); err != nil {
		f.Close()
		helperWhy = fmt.Sprintf("%s: %v", path, err)
		return
	}
	helperExe, helperFile, helperWhy = exe, f, ""
}

// errHelperUnfit: the harness-sandbox found is not run.
var errHelperUnfit = errors.New("not run")

// loadHelper copies the program at path into a sealed memory file, when
// it is fit to run outside the sandbox: a regular file (not a link), of
// this user or root, that no one else may write, in a directory no one
// else may write. The file returned has a descriptor above the helper's
// own files (0 to 5), so that it is still there when the helper is
// executed through /proc/self/fd.
func loadHelper(path string) (*os.File, error) {
	unfit := func(format string, args ...any) (*os.File, error) {
		return nil, fmt.Errorf("%w: %s %s", errHelperUnfit, path, fmt.Sprintf(format, args...))
	}
	uid := uint32(os.Getuid())
	var dst unix.Stat_t
	if err := unix.Stat(filepath.Dir(path), &dst); err != nil {
		return unfit("is not there: %v", err)
	}
	if dst.Uid != uid && dst.Uid != 0 || dst.Mode&0o022 != 0 {
		return unfit("lies in a directory another user may write")
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return unfit("is not there: %v", err)
	}
	src := os.NewFile(uintptr(fd), path)
	defer src.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return unfit("cannot be read: %v", err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return unfit("is not a regular file")
	case st.Uid != uid && st.Uid != 0:
		return unfit("belongs to user %d", st.Uid)
	case st.Mode&0o022 != 0:
		return unfit("may be written by another user (mode %o)", st.Mode&0o777)
	case st.Mode&0o100 == 0:
		return unfit("is not executable")
	case st.Size > maxHelperSize:
		return unfit("is larger than %d bytes", maxHelperSize)
	}
	mfd, err := unix.MemfdCreate(HelperName, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // a kernel before MFD_EXEC (6.3): executable by default
		mfd, err = unix.MemfdCreate(HelperName, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s: memfd_create: %w", path, err)
	}
	high, err := unix.FcntlInt(uintptr(mfd), unix.F_DUPFD_CLOEXEC, 10)
	unix.Close(mfd)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	mem := os.NewFile(uintptr(high), HelperName)
	n, err := io.Copy(mem, io.LimitReader(src, maxHelperSize+1))
	if err == nil && n != st.Size {
		err = fmt.Errorf("read %d bytes, its size is %d", n, st.Size)
	}
	if err == nil {
		_, err = unix.FcntlInt(mem.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	}
	if err != nil {
		mem.Close()
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	return mem, nil
}
