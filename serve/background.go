package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// ErrNoAnswer is StartBackground's error when the server it started did
// not answer on the store's socket in time.
var ErrNoAnswer = errors.New("it did not answer")

// Running reports whether a server of the store in the directory store
// answers on its socket.
func Running(ctx context.Context, store string) bool {
	c, err := socketstore.Dial(ctx, store)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// StartBackground starts cmd, a server of the store in the directory
// store (`harness serve`), in a session of its own so that it outlives
// the caller, its output appended to the store's LogFile, and waits up to
// wait for it to answer on the store's socket. It returns the server's
// process id and the URL its InfoFile names ("" when it names none). A
// server that does not answer in time is ErrNoAnswer, naming the log;
// it is left running.
func StartBackground(ctx context.Context, store string, cmd *exec.Cmd, wait time.Duration) (pid int, url string, err error) {
	run, err := socketstore.RunDir(store)
	if err != nil {
		return 0, "", fmt.Errorf("start a server: %w", err)
	}
	logPath := filepath.Join(run, LogFile)
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, "", fmt.Errorf("start a server: %w", err)
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, "", fmt.Errorf("start a server: %w", err)
	}
	pid = cmd.Process.Pid
	cmd.Process.Release()
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		if Running(ctx, store) {
			if b, err := os.ReadFile(filepath.Join(run, InfoFile)); err == nil {
				var info struct{ URL string }
				if json.Unmarshal(b, &info) == nil {
					url = info.URL
				}
			}
			return pid, url, nil
		}
		select {
		case <-ctx.Done():
			return pid, "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return pid, "", fmt.Errorf("start a server: %w within %v; see %s", ErrNoAnswer, wait, logPath)
}

// AutoStart starts a server of the place's store in the background
// (StartBackground, waiting up to wait) when its settings ask for one
// ("serve": {"auto": true}) and none answers, so that the command that
// calls it and the ones after share the store: only for a store in a
// directory, one that exists or is to be created (create). server makes
// the server's command, its directory the workspace's root; it is called
// only when a server is to start. started is false when none was.
func AutoStart(ctx context.Context, p stock.Place, settings stock.Settings, create bool, server func() (*exec.Cmd, error), wait time.Duration) (pid int, url string, started bool, err error) {
	if settings.Serve == nil || !settings.Serve.Auto || p.Remote != "" || (!p.Exists && !create) {
		return 0, "", false, nil
	}
	if Running(ctx, p.Store) {
		return 0, "", false, nil
	}
	cmd, err := server()
	if err != nil {
		return 0, "", false, fmt.Errorf("start a server: %w", err)
	}
	cmd.Dir = p.Root
	pid, url, err = StartBackground(ctx, p.Store, cmd, wait)
	return pid, url, err == nil, err
}
