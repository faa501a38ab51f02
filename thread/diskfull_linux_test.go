package thread_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/thread"
)

// A store on a disk that fills up: an append that would leave less than
// the room the store keeps is refused with ErrDiskFull, nothing written;
// the log is whole; the store opens read-only and reads; opening it for
// writing fails at once, saying why, instead of retrying forever. The
// disk is a real 8 MiB tmpfs, mounted by a child process in user and mount
// namespaces of its own.
func TestDiskFull(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=diskfull:"+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}},
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), out.String())
	require.Contains(t, out.String(), "ok\n", out.String())
}

// diskFullChild runs TestDiskFull's scenario in its namespaces and prints
// "ok" when every step held.
func diskFullChild(dir string) int {
	fail := func(format string, args ...any) int {
		fmt.Printf("child: "+format+"\n", args...)
		return 1
	}
	if err := syscall.Mount("", "/", "", syscall.MS_PRIVATE|syscall.MS_REC, ""); err != nil {
		return fail("private mounts: %v", err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=8m"); err != nil {
		return fail("mount tmpfs: %v", err)
	}
	ctx := context.Background()
	db := filepath.Join(dir, "db")
	s, err := thread.OpenPebble(db, thread.WithMinFree(1<<20))
	if err != nil {
		return fail("open: %v", err)
	}
	draft := func(cause string) facts.Draft {
		d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: "hello"})
		if err != nil {
			panic(err)
		}
		return d
	}
	h, err := s.Append(ctx, "t", 0, draft("ingress/start"))
	if err != nil {
		return fail("first append: %v", err)
	}
	// Fill the disk but for half a MiB.
	fill, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		return fail("fill: %v", err)
	}
	chunk := make([]byte, 64<<10)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return fail("statfs: %v", err)
		}
		if uint64(st.Bavail)*uint64(st.Bsize) < 512<<10 {
			break
		}
		if _, err := fill.Write(chunk); err != nil {
			break
		}
	}
	fill.Close()
	_, err = s.Append(ctx, "t", h.Seq, draft("ingress/two"))
	if !errors.Is(err, thread.ErrDiskFull) {
		return fail("append on a full disk: %v, want ErrDiskFull", err)
	}
	if _, err := s.PutBlob(ctx, []byte("content")); !errors.Is(err, thread.ErrDiskFull) {
		return fail("blob on a full disk: %v, want ErrDiskFull", err)
	}
	if got, err := s.Head(ctx, "t"); err != nil || got.Seq != h.Seq {
		return fail("head after the refusal: %v %v, want seq %d", got, err, h.Seq)
	}
	if err := s.Verify(ctx, "t"); err != nil {
		return fail("verify: %v", err)
	}
	if err := s.Close(); err != nil {
		return fail("close: %v", err)
	}
	if _, err := thread.OpenPebble(db, thread.WithMinFree(1<<20)); !errors.Is(err, thread.ErrDiskFull) {
		return fail("open for writing on a full disk: %v, want ErrDiskFull", err)
	}
	ro, err := thread.OpenPebble(db, thread.ReadOnly(), thread.WithMinFree(1<<20))
	if err != nil {
		return fail("open read-only on a full disk: %v", err)
	}
	n := 0
	for _, err := range ro.Read(ctx, "t", 1) {
		if err != nil {
			return fail("read: %v", err)
		}
		n++
	}
	if n != 1 {
		return fail("read %d facts, want 1", n)
	}
	if _, err := ro.Append(ctx, "t", h.Seq, draft("ingress/three")); !errors.Is(err, thread.ErrReadOnly) {
		return fail("append to a read-only store: %v, want ErrReadOnly", err)
	}
	if err := ro.Close(); err != nil {
		return fail("close read-only: %v", err)
	}
	fmt.Println("ok")
	return 0
}
