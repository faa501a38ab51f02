package socketstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// dialFromSandbox is what the sandboxed command of
// TestSandboxedCommandIsRefused runs: a hostile client, which skips the
// client's own check of the listener, dials the socket at p and appends.
func dialFromSandbox(p string) {
	socketstore.TrustAnyListener()
	ctx := context.Background()
	c, err := socketstore.DialAt(ctx, p)
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(3)
	}
	d, err := facts.NewDraft(facts.KindUserMessage, "ingress/forged", facts.UserMessage{Text: "forged"})
	if err == nil {
		_, err = c.Append(ctx, "t1", 0, d)
	}
	if err != nil {
		fmt.Println("append:", err)
		os.Exit(3)
	}
	fmt.Println("appended")
	os.Exit(0)
}

// sandboxed runs line in the default sandbox of a fresh workspace whose
// store is elsewhere, and returns its output, as a command the model ran
// would.
func sandboxed(t *testing.T, ws, line string) string {
	t.Helper()
	if err := sandbox.Probe().Err(); err != nil {
		t.Skip(err)
	}
	spec, err := sandbox.Default(ws, "")
	require.NoError(t, err)
	require.Contains(t, spec.Hidden, sandbox.RuntimeDirPath(), "every sandbox hides the runtime directory")
	out, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &sandbox.Cmd{Spec: spec, Line: line, Stdout: out, Stderr: out}
	require.NoError(t, c.Start(ctx))
	_, err = c.Wait()
	require.NoError(t, err)
	b, err := os.ReadFile(out.Name())
	require.NoError(t, err)
	return string(b)
}

// TestSandboxedCommandIsRefused: a command in the sandbox of another
// workspace, of the same user, cannot use a store's server. Its socket
// and token file are in the runtime directory, which the sandbox hides;
// and were a socket of the server in reach (here one in the command's own
// workspace), the server refuses the command's process, which is in a user
// namespace of its own, even when the client skips its own checks. Nothing
// is appended.
func TestSandboxedCommandIsRefused(t *testing.T) {
	s := serveDir(t, t.TempDir())
	run, err := socketstore.RunDir(s.dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(run, "serve.json"), []byte(`{"url": "http://127.0.0.1:1/?token=secret"}`), 0o600))
	ws := t.TempDir()
	visible := filepath.Join(ws, "s.sock")
	ln, err := net.Listen("unix", visible)
	require.NoError(t, err)
	go s.server.Serve(ln)
	bin, err := os.Executable()
	require.NoError(t, err)

	// The server's own socket: not there for the command.
	out := sandboxed(t, ws, fmt.Sprintf("ls -A %q; cat %q; HARNESS_SOCKET_DIAL=%q exec %q -test.run='^$'",
		sandbox.RuntimeDirPath(), filepath.Join(run, "serve.json"), socketstore.Path(s.dir), bin))
	require.NotContains(t, out, "secret")
	require.NotContains(t, out, "serve.json\n", "the directory cannot be listed")
	require.Contains(t, out, "cat: "+filepath.Join(run, "serve.json")+": ")
	require.Contains(t, out, "dial: ")
	require.NotContains(t, out, "appended")

	// One in reach: refused by the server.
	out = sandboxed(t, ws, fmt.Sprintf("HARNESS_SOCKET_DIAL=%q exec %q -test.run='^$'", visible, bin))
	require.Contains(t, out, "dial: ")
	require.Contains(t, out, "another user namespace")
	require.NotContains(t, out, "appended")
	_, err = s.store.Head(context.Background(), "t1")
	require.ErrorIs(t, err, thread.ErrNotFound, "nothing was appended")

	// The same client outside the sandbox is served: the refusal was the
	// namespace's.
	c, err := socketstore.DialAt(context.Background(), visible)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Append(context.Background(), "t1", 0, msg(t, "ingress/a", "x"))
	require.NoError(t, err)
}

// TestServerOfAnotherEnvironmentIsHidden: a server started by a process
// whose $XDG_RUNTIME_DIR and $TMPDIR are one thing (a desktop shell) and a
// command run by a process that sees others (cron, ssh, an IDE) still
// agree on the runtime directory, which no environment moves: the
// command's sandbox hides the server's token file and its socket, where
// the server's environment would have put them too.
func TestServerOfAnotherEnvironmentIsHidden(t *testing.T) {
	xdg := shortDir(t) // short enough for a socket beneath it, as a real one is
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	t.Setenv("TMPDIR", shortDir(t))
	s := serveDir(t, t.TempDir())
	run, err := socketstore.RunDir(s.dir)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(run, "serve.json"), []byte(`{"url": "http://127.0.0.1:1/?token=secret"}`), 0o600))

	t.Setenv("XDG_RUNTIME_DIR", "")
	os.Unsetenv("XDG_RUNTIME_DIR")
	t.Setenv("TMPDIR", shortDir(t))
	bin, err := os.Executable()
	require.NoError(t, err)
	out := sandboxed(t, t.TempDir(), fmt.Sprintf("cat %q %q/harness/*/serve.json %q/harness-*/*/serve.json; HARNESS_SOCKET_DIAL=%q exec %q -test.run='^$'",
		filepath.Join(run, "serve.json"), xdg, os.Getenv("TMPDIR"), filepath.Join(run, socketstore.SocketName), bin))
	require.NotContains(t, out, "secret")
	require.Contains(t, out, "cat: "+filepath.Join(run, "serve.json")+": ")
	require.Contains(t, out, "dial: ")
	require.NotContains(t, out, "another user namespace", "not refused by the server: never connected")
	require.NotContains(t, out, "appended")
	_, err = s.store.Head(context.Background(), "t1")
	require.ErrorIs(t, err, thread.ErrNotFound, "nothing was appended")
	require.NotContains(t, run, xdg, "the server's environment did not move it")
}

// TestListenerInASandboxIsRefused: a client outside the sandbox refuses a
// listener a sandboxed command bound (a server of its own at a path the
// client dials), before it sends anything.
func TestListenerInASandboxIsRefused(t *testing.T) {
	ws := t.TempDir()
	p := filepath.Join(ws, "fake.sock")
	done := make(chan string, 1)
	go func() {
		done <- sandboxed(t, ws, fmt.Sprintf("HARNESS_SOCKET_SERVE=%q exec %q -test.run='^$'", p, mustExecutable(t)))
	}()
	// The socket's file is there once it is bound, a moment before it
	// listens: until then a dial finds no server.
	var err error
	require.Eventually(t, func() bool {
		_, err = socketstore.DialAt(context.Background(), p)
		return !errors.Is(err, socketstore.ErrNoServer)
	}, 30*time.Second, 20*time.Millisecond)
	require.ErrorIs(t, err, socketstore.ErrRefused)
	require.Contains(t, err.Error(), "another user namespace")
	out := <-done
	require.NotContains(t, out, "got a call", "the client sent nothing")
}

// shortDir is a fresh directory with a short path, removed after the test.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/tmp", "rt")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func mustExecutable(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	require.NoError(t, err)
	return bin
}

// serveFromSandbox is what the sandboxed command of
// TestListenerInASandboxIsRefused runs: a listener at p, for one
// connection; it says whether anything was sent.
func serveFromSandbox(p string) {
	ln, err := net.Listen("unix", p)
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(3)
	}
	c, err := ln.Accept()
	if err != nil {
		os.Exit(3)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b bytes.Buffer
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if b.Len() > 0 {
		fmt.Printf("got a call: %q\n", b.String())
	}
	os.Exit(0)
}

func init() {
	helpers["HARNESS_SOCKET_DIAL"] = dialFromSandbox
	helpers["HARNESS_SOCKET_SERVE"] = serveFromSandbox
}
