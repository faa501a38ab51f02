package socketstore_test

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
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/sandbox"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
	"github.com/seed-7cc7a084/harness/thread/storetest"
)

// served is a Pebble store held by a server in this process, listening on
// the socket of its store directory.
type served struct {
	dir    string // the store directory
	store  *thread.PebbleStore
	server *socketstore.Server
	done   chan error
}

func serveDir(t *testing.T, dir string) *served {
	t.Helper()
	store, err := thread.OpenPebble(filepath.Join(dir, "db"))
	require.NoError(t, err)
	ln, err := socketstore.Listen(dir)
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(socketstore.Path(dir))) }) // after stop
	s := &served{dir: dir, store: store, server: socketstore.NewServer(store, harness.Hold), done: make(chan error, 1)}
	go func() { s.done <- s.server.Serve(ln) }()
	t.Cleanup(s.stop)
	return s
}

// stop closes the server and the store; stopping twice does nothing.
func (s *served) stop() {
	if s.server == nil {
		return
	}
	s.server.Close()
	<-s.done
	s.store.Close()
	s.server = nil
}

func dial(t *testing.T, dir string) *socketstore.Client {
	t.Helper()
	c, err := socketstore.Dial(context.Background(), dir)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestConformance: a client is a thread.Store like any other — the suite
// every store passes, through the socket.
func TestConformance(t *testing.T) {
	servers := map[thread.Store]*served{}
	var mu sync.Mutex
	open := func(t *testing.T, dir string) thread.Store {
		s := serveDir(t, dir)
		c, err := socketstore.Dial(context.Background(), dir)
		require.NoError(t, err)
		mu.Lock()
		servers[c] = s
		mu.Unlock()
		return c
	}
	storetest.Run(t, storetest.Opener{
		Open: func(t *testing.T) thread.Store { return open(t, t.TempDir()) },
		Reopen: func(t *testing.T, c thread.Store) thread.Store {
			mu.Lock()
			s := servers[c]
			mu.Unlock()
			require.NoError(t, c.Close())
			s.stop()
			return open(t, s.dir)
		},
	})
}

func msg(t testing.TB, cause, text string) facts.Draft {
	t.Helper()
	d, err := facts.NewDraft(facts.KindUserMessage, cause, facts.UserMessage{Text: text})
	require.NoError(t, err)
	return d
}

// TestErrorsKeepTheirShape: what the store refuses reaches the client as
// the same typed error, with the fields a caller acts on.
func TestErrorsKeepTheirShape(t *testing.T) {
	s := serveDir(t, t.TempDir())
	c := dial(t, s.dir)
	ctx := context.Background()
	h, err := c.Append(ctx, "t1", 0, msg(t, "ingress/a", "one"), msg(t, "ingress/b", "two"))
	require.NoError(t, err)
	direct, err := s.store.Head(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, direct, h, "the head through the socket is the store's, hash and time included")

	_, err = c.Append(ctx, "t1", 1, msg(t, "ingress/c", "late"))
	var ce *thread.ConflictError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, uint64(1), ce.Expected)
	require.Equal(t, direct, ce.Actual)

	_, err = c.Append(ctx, "t1", 2, msg(t, "ingress/a", "again"))
	var de *thread.DuplicateCauseError
	require.ErrorAs(t, err, &de)
	require.Equal(t, uint64(1), de.Seq)

	_, err = c.Head(ctx, "nope")
	require.ErrorIs(t, err, thread.ErrNotFound)
	_, err = c.Append(ctx, "bad id", 0, msg(t, "ingress/x", "x"))
	require.ErrorIs(t, err, thread.ErrBadThreadID)
	_, err = c.Append(ctx, "t1", 2, facts.Draft{Kind: facts.KindUserMessage, Cause: "ingress/z", Data: []byte{0xc1}})
	require.ErrorIs(t, err, facts.ErrPayload)

	got := 0
	for f, err := range c.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		require.NotZero(t, f.Hash())
		got++
	}
	require.Equal(t, 2, got)
	require.NoError(t, c.Verify(ctx, "t1"))
}

// TestBlobsAndMeta: the held store's blobs and meta space, through the
// socket; a blob that is not kept is fs.ErrNotExist.
func TestBlobsAndMeta(t *testing.T) {
	s := serveDir(t, t.TempDir())
	c := dial(t, s.dir)
	ctx := context.Background()
	var _ action.Blobs = c
	var _ action.Meta = c
	var _ action.BlobChecker = c

	d, err := c.PutBlob(ctx, []byte("ttl_seconds = 300\n"))
	require.NoError(t, err)
	direct, err := s.store.GetBlob(ctx, d)
	require.NoError(t, err)
	require.Equal(t, "ttl_seconds = 300\n", string(direct))
	b, err := c.GetBlob(ctx, d)
	require.NoError(t, err)
	require.Equal(t, direct, b)
	ok, err := c.HasBlob(ctx, d)
	require.NoError(t, err)
	require.True(t, ok)

	empty, err := c.PutBlob(ctx, nil)
	require.NoError(t, err)
	b, err = c.GetBlob(ctx, empty)
	require.NoError(t, err)
	require.Empty(t, b)

	missing := strings.Repeat("ab", 32)
	_, err = c.GetBlob(ctx, missing)
	require.ErrorIs(t, err, fs.ErrNotExist)
	ok, err = c.HasBlob(ctx, missing)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = c.GetBlob(ctx, "not-a-digest")
	require.ErrorIs(t, err, fs.ErrInvalid)

	kv := func(yield func([]byte, []byte) bool) {
		_ = yield([]byte("a"), []byte("1")) && yield([]byte("empty"), []byte{}) && yield([]byte("gone"), nil)
	}
	require.NoError(t, c.PutMeta(ctx, "ns", kv))
	v, err := c.GetMeta(ctx, "ns", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	v, err = c.GetMeta(ctx, "ns", []byte("empty"))
	require.NoError(t, err)
	require.Empty(t, v)
	_, err = c.GetMeta(ctx, "ns", []byte("gone"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestNoServer: a directory nobody serves, and a socket a dead server
// left behind, are ErrNoServer; a server that starts later is found.
func TestNoServer(t *testing.T) {
	dir := t.TempDir()
	_, err := socketstore.Dial(context.Background(), dir)
	require.ErrorIs(t, err, socketstore.ErrNoServer)

	// A socket file nobody listens on.
	_, err = socketstore.RunDir(dir)
	require.NoError(t, err)
	ln, err := net.Listen("unix", socketstore.Path(dir))
	require.NoError(t, err)
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	require.NoError(t, ln.Close())
	_, err = os.Stat(socketstore.Path(dir))
	require.NoError(t, err, "the stale socket is there")
	_, err = socketstore.Dial(context.Background(), dir)
	require.ErrorIs(t, err, socketstore.ErrNoServer)

	s := serveDir(t, dir)
	fi, err := os.Stat(socketstore.Path(dir))
	require.NoError(t, err)
	require.Equal(t, fs.ModeSocket|0o600, fi.Mode(), "only the owner may connect")
	c := dial(t, dir)
	require.Equal(t, os.Getpid(), c.Info().PID)
	s.stop()
	_, err = os.Stat(socketstore.Path(dir))
	require.ErrorIs(t, err, fs.ErrNotExist, "a server that stops takes its socket away")
	_, err = os.Stat(filepath.Dir(socketstore.Path(dir)))
	require.ErrorIs(t, err, fs.ErrNotExist, "and its empty runtime directory")
	_, err = c.Head(context.Background(), "t1")
	require.ErrorIs(t, err, socketstore.ErrServerGone)
}

// TestSocketOutsideTheStore: the socket is in the user's runtime
// directory, never in the store directory (which may be in a workspace
// another workspace's sandboxed command can read), the same for every
// process however it names the store, and private; a deep store directory
// makes no longer a path. A stale socket an older server left in the store
// directory is removed.
func TestSocketOutsideTheStore(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))} {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		old, err := net.Listen("unix", filepath.Join(t.TempDir(), "old.sock"))
		require.NoError(t, err)
		old.(*net.UnixListener).SetUnlinkOnClose(false)
		old.Close()
		if len(filepath.Join(dir, socketstore.SocketName)) < 100 {
			require.NoError(t, os.Rename(old.Addr().String(), filepath.Join(dir, socketstore.SocketName)))
		}
		p := socketstore.Path(dir)
		require.NotContains(t, p, dir)
		require.True(t, strings.HasPrefix(p, sandbox.RuntimeDirPath()+"/"), p)
		require.Less(t, len(p), 104)
		link := filepath.Join(t.TempDir(), "link")
		require.NoError(t, os.Symlink(dir, link))
		require.Equal(t, p, socketstore.Path(link), "the store is known by its resolved path")
		require.Equal(t, p, socketstore.Path(dir+"/."))

		s := serveDir(t, dir)
		require.NoFileExists(t, filepath.Join(dir, socketstore.SocketName), "the old socket is gone")
		c := dial(t, link)
		_, err = c.Append(context.Background(), "t1", 0, msg(t, "ingress/a", "x"))
		require.NoError(t, err)
		_, err = s.store.Head(context.Background(), "t1")
		require.NoError(t, err)
		for _, d := range []string{filepath.Dir(p), sandbox.RuntimeDirPath()} {
			fi, err := os.Stat(d)
			require.NoError(t, err)
			require.Equal(t, fs.ModeDir|0o700, fi.Mode(), d)
		}
		s.stop()
	}
}

// TestLeaseIsTheServersHold: a client's lease is a hold in the server's
// process: while one client holds a thread, another waits, the server's
// own runtimes wait, and harness.Free says it is held, from anywhere.
func TestLeaseIsTheServersHold(t *testing.T) {
	s := serveDir(t, t.TempDir())
	a, b := dial(t, s.dir), dial(t, s.dir)
	ctx := context.Background()

	held, release, err := a.Lease(ctx, "t1")
	require.NoError(t, err)
	require.NoError(t, held.Err())

	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, _, err = b.Lease(short, "t1")
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "another client waits")
	short, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
	_, _, err = harness.Hold(short, s.store, "t1")
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "the server's own runtimes wait")
	for _, st := range []thread.Store{b, s.store} {
		free, err := harness.Free(ctx, st, "t1")
		require.NoError(t, err)
		require.False(t, free)
	}
	// Another thread is not held.
	free, err := harness.Free(ctx, b, "t2")
	require.NoError(t, err)
	require.True(t, free)

	release()
	require.Error(t, held.Err(), "release ends the lease's context")
	require.NotErrorIs(t, context.Cause(held), thread.ErrLeaseLost, "a release is not a lease lost")
	free, err = harness.Free(ctx, b, "t1")
	require.NoError(t, err)
	require.True(t, free, "released means free at once, for everyone")
	_, release2, err := b.Lease(ctx, "t1")
	require.NoError(t, err)
	release2()
	release2() // twice is harmless
}

// TestLeaseLostWhenTheServerStops: a server that stops ends its clients'
// leases with thread.ErrLeaseLost.
func TestLeaseLostWhenTheServerStops(t *testing.T) {
	s := serveDir(t, t.TempDir())
	c := dial(t, s.dir)
	held, release, err := c.Lease(context.Background(), "t1")
	require.NoError(t, err)
	defer release()
	s.stop()
	select {
	case <-held.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the lease outlived its server")
	}
	require.ErrorIs(t, context.Cause(held), thread.ErrLeaseLost)
}

// helpers are the processes the tests start, by the environment
// variable that names each: each is given its value, and exits.
var helpers = map[string]func(string){}

// The helper process: with HARNESS_SOCKET_HELPER set, the test binary
// dials the server of that directory (or the socket HARNESS_SOCKET_AT
// names), leases t1, says so, and waits to be killed.
func TestMain(m *testing.M) {
	for name, h := range helpers {
		if v := os.Getenv(name); v != "" {
			h(v)
		}
	}
	if dir := os.Getenv("HARNESS_SOCKET_HELPER"); dir != "" {
		if os.Getenv("HARNESS_SOCKET_HOSTILE") != "" {
			socketstore.TrustAnyListener()
		}
		dial := func() (*socketstore.Client, error) { return socketstore.Dial(context.Background(), dir) }
		if at := os.Getenv("HARNESS_SOCKET_AT"); at != "" {
			dial = func() (*socketstore.Client, error) { return socketstore.DialAt(context.Background(), at) }
		}
		c, err := dial()
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(2)
		}
		if _, _, err := c.Lease(context.Background(), "t1"); err != nil {
			fmt.Println("lease:", err)
			os.Exit(2)
		}
		fmt.Println("held")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	// Servers' sockets go to the user's own runtime directory (no
	// environment moves it), each in the directory of its store, which
	// is the test's own: serveDir removes it after.
	os.Exit(m.Run())
}

// helper starts the helper process on dir; cred, when set, runs it as
// another user.
func helper(t *testing.T, dir string, cred *syscall.Credential, bin string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	if bin == "" {
		bin = os.Args[0]
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), "HARNESS_SOCKET_HELPER="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, bufio.NewReader(out)
}

// TestLeaseEndsWithItsProcess: a client killed while it holds a thread
// lets go of it: the server's hold ends with the connection.
func TestLeaseEndsWithItsProcess(t *testing.T) {
	s := serveDir(t, t.TempDir())
	cmd, out := helper(t, s.dir, nil, "")
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", line)

	c := dial(t, s.dir)
	free, err := harness.Free(context.Background(), c, "t1")
	require.NoError(t, err)
	require.False(t, free, "the other process holds it")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, release, err := c.Lease(ctx, "t1")
	require.NoError(t, err, "a dead client's hold ends with it")
	release()
}

// TestOtherUsersAreRefused: the socket is the owner's: another user cannot
// reach it in the owner's runtime directory, and, should a socket of the
// server be in their reach, the server refuses them.
func TestOtherUsersAreRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("running a process as another user needs root")
	}
	// The helper must be executable by nobody: a copy in a directory
	// anyone can enter.
	bindir, err := os.MkdirTemp("", "harness-helper-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(bindir) })
	require.NoError(t, os.Chmod(bindir, 0o755))
	bin := filepath.Join(bindir, "helper")
	src, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, src, 0o755))

	dir := filepath.Join(bindir, "store")
	require.NoError(t, os.Mkdir(dir, 0o755))
	s := serveDir(t, dir)
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534}

	t.Setenv("HARNESS_SOCKET_AT", socketstore.Path(dir)) // root's socket: theirs is elsewhere
	cmd, out := helper(t, s.dir, nobody, bin)
	b, _ := io.ReadAll(out)
	cmd.Wait()
	require.Contains(t, string(b), "permission denied", "the runtime directory's mode keeps other users out")

	// A socket of the server that they can reach (not the one in the
	// runtime directory, which is the user's own, shared with every other
	// test and server of the user, and made private again by each).
	open := filepath.Join(bindir, "open.sock")
	ln, err := net.Listen("unix", open)
	require.NoError(t, err)
	go s.server.Serve(ln)
	require.NoError(t, os.Chmod(open, 0o666))
	t.Setenv("HARNESS_SOCKET_HOSTILE", "1") // its client would refuse the server: it cannot see root's namespace
	t.Setenv("HARNESS_SOCKET_AT", open)
	cmd, out = helper(t, s.dir, nobody, bin)
	b, _ = io.ReadAll(out)
	cmd.Wait()
	require.Contains(t, string(b), "may not use the store of user 0", "the server refuses them")
}

// TestTwoClientsResumingOneThread: two processes' runtimes, each through
// its own client, resume one approved thread at once: the tool runs once,
// and the log holds one start of it.
func TestTwoClientsResumingOneThread(t *testing.T) {
	s := serveDir(t, t.TempDir())
	var runs atomic.Int64
	entered := make(chan struct{}, 2)
	proceed := make(chan struct{})
	tools, err := harness.NewToolbox(harness.Tool{
		Spec:  facts.ToolSchema{Name: "write_file"},
		Needs: action.Write,
		Run: func(ctx context.Context, _ json.RawMessage) (facts.Report, error) {
			runs.Add(1)
			entered <- struct{}{}
			<-proceed
			return facts.Report{Status: facts.StatusSucceeded}, nil
		},
	})
	require.NoError(t, err)
	script := `{"tool_calls": [{"id": "c", "name": "write_file", "args": "{}"}]}
{"text": "Done."}
{"text": "Done."}`
	cfg, err := harness.NewConfig(harness.WithModelBackoff(0))
	require.NoError(t, err)
	actor, err := harness.CodingActor(cfg, tools)
	require.NoError(t, err)
	runtime := func(st thread.Store) *harness.Runtime {
		m, err := model.ParseScript("test", []byte(script))
		require.NoError(t, err)
		rt, err := harness.NewRuntime(st, harness.Services{Model: m, Tools: tools}, cfg)
		require.NoError(t, err)
		return rt
	}
	ctx := context.Background()
	a, b := dial(t, s.dir), dial(t, s.dir)
	out, err := runtime(a).Start(ctx, actor, "t1", "go")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	answer, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: out.Waits[0].RequestID, Approved: true, By: "ana"})
	require.NoError(t, err)
	_, err = runtime(b).Post(ctx, actor, "t1", answer, "confirm")
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, st := range []thread.Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = runtime(st).Resume(ctx, actor, "t1")
		}()
	}
	<-entered
	// One runs the tool; the other waits for the thread. Neither may
	// enter the tool again, however long we wait for it.
	select {
	case <-entered:
		t.Fatal("two clients ran the tool at once")
	case <-time.After(300 * time.Millisecond):
	}
	close(proceed)
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Equal(t, int64(1), runs.Load())
	started := 0
	for f, err := range s.store.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		if f.Kind == facts.KindActionStarted {
			started++
		}
	}
	require.Equal(t, 1, started)
}

// TestLeaseWithoutHoldIsRefused: a server made with no HoldFunc leases
// nothing, and says so; the client's store works all the same.
func TestLeaseWithoutHoldIsRefused(t *testing.T) {
	dir := t.TempDir()
	store, err := thread.OpenPebble(filepath.Join(dir, "db"))
	require.NoError(t, err)
	defer store.Close()
	ln, err := socketstore.Listen(dir)
	require.NoError(t, err)
	srv := socketstore.NewServer(store, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() { srv.Close(); <-done }()

	c := dial(t, dir)
	_, _, err = c.Lease(context.Background(), "t1")
	require.ErrorIs(t, err, socketstore.ErrNoHold)
	_, err = c.Head(context.Background(), "t1")
	require.ErrorIs(t, err, thread.ErrNotFound)
}
