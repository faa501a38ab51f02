package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
	"github.com/seed-7cc7a084/harness/thread/socketstore"
)

// serveFlags are the flags of the commands that serve.
type serveFlags struct {
	addr string
	idle time.Duration
	// drive is how many submitted threads harness serve drives at once
	// (its --drive; 0 for run --serve).
	drive int
}

func (a *app) serveCmd() *cobra.Command {
	var f driveFlags
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT]",
		Short: "Hold the workspace's store and serve it: to the other harness commands, a web page, an HTTP API",
		Long: `Hold the workspace's store in this process and serve it until interrupted:

  - every other harness command of the workspace (threads, log, approve, run,
    resume, undo, …) reads and appends through a local socket (mode 0600: only
    you) in your harness runtime directory (/run/user/UID/harness, else
    /tmp/harness-UID; no environment variable moves it), never in the
    workspace, so none of them is told the store is in use; no sandboxed
    command of any workspace can reach it;
  - a web page and an HTTP JSON API at the address printed, with its token:
    the threads, each thread's facts as they are appended, its actions with
    report, observation, effect state, check and sandbox side by side, and
    forms to approve, deny, answer and reconcile. An answer given there records
    the name the token names, and the server then resumes the thread (with the
    model it recorded, and --approve/--allow/--deny as run takes them).

The page's address carries a fresh token naming you (your login name);
settings may add tokens naming others ("serve": {"tokens": [{"name": "bob",
"token": "…"}]} in .harness/config.json). The server listens on loopback
(127.0.0.1:8470, or any free port); --addr names another address, and only
--addr may name one beyond loopback.

On a store in a directory the server also drives the threads left for the
workers (harness submit, run --detach, an answer given without --resume, and
those it finds so when it starts), --drive at a time, as harness worker does:
one driver per thread under its lease, only the threads of this workspace,
each decided by the policy it records (harness submit --approve …) and
otherwise asking a person — the server's own --approve/--allow/--deny are for
the threads started on its page, never for a thread it takes up, which may be
a person's at a terminal — --model (or the settings' model) for a thread that
records none; with no model it drives none. harness worker --store DIR takes
the same work through the socket, beside it.

On a NATS store (--store nats://…) the server shows every thread of the
server, with the workspace each works in; it resumes only this workspace's.

The API:
  GET  /api/threads, /api/threads/ID, /api/threads/ID/facts?from=SEQ
  GET  /api/threads/ID/stream            (Server-Sent Events, one per fact)
  GET  /api/threads/ID/progress          (Server-Sent Events: live model text and command output while the server drives it)
  POST /api/threads/ID/answer            {"kind": "confirmation", "request_id": "1-call_1", "approved": true, "digest": "…"}
  POST /api/threads/ID/resume
  GET  /api/threads/ID/replay, /api/threads/ID/undo?to=SEQ, /api/threads/ID/fork?at=SEQ, /api/effects
with the token as "Authorization: Bearer TOKEN".`,
		Example: `  harness serve
  harness serve --addr 127.0.0.1:9000 --approve writes
  curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8470/api/threads`,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			if sf.drive < 0 {
				return usageError("--drive %d: want 0 (drive nothing) or more threads at once", sf.drive)
			}
			o := driving(cmd.Context())
			o.Model, o.ModelSpec, o.ModelDir = stock.ModelIfAny, f.model, cwdOrEmpty()
			return a.serve(cmd.Context(), &f, sf, serveHooks{}, o)
		}),
	}
	f.add(cmd)
	fl := cmd.Flags()
	_ = fl.MarkHidden("no-input")
	sf.add(cmd)
	fl.IntVar(&sf.drive, "drive", defaultServeDrive, "on a store in a directory, how many submitted threads (harness submit, run --detach, an answer given without --resume) the server drives at once, beside any harness worker --store DIR; 0 leaves them to the workers")
	fl.Lookup("model").Usage = "the model of submitted threads that recorded none (default: the settings file's model)"
	return cmd
}

func (sf *serveFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&sf.addr, "addr", "", "listen for HTTP at `HOST:PORT` (default "+serve.DefaultAddr+", or a free port, or the settings' serve.addr, which may only name loopback); only this flag may name an address beyond loopback")
	fl.DurationVar(&sf.idle, "idle", 0, "stop once nobody has used the server for this long (default: serve until interrupted)")
}

// serveHooks are what a command that serves does: opened, once the
// session is made, before its store is held (run --serve loads its
// model); run, with the server up (run --serve drives its thread); and
// last, once serving stops, before the store closes.
type serveHooks struct {
	opened func(*stock.Session) error
	run    func(*stock.Session, drive.Approval) error
	last   func(*stock.Session) error
}

// startServer serves the session's store (serve.HostSession): the page
// and the API on addr (or the settings' address, or the default), and,
// for a store in a directory, the socket every other command of the
// workspace goes through.
func (a *app) startServer(s *stock.Session, approval drive.Approval, addr string, work *socketstore.Work) (*serve.Hosted, error) {
	h, err := serve.HostSession(s, serve.Hosting{Addr: addr, Who: a.whoami(), Approval: approval, Work: work,
		// A request's path comes from anyone who reaches the address, an
		// error may quote the model: one escaped line each.
		Logf: func(format string, args ...any) {
			fmt.Fprintln(a.stderr, "harness serve: "+present.EscapeLine(fmt.Sprintf(format, args...)))
		}})
	if errors.Is(err, stock.ErrNotLoopback) {
		return nil, usageError("%v: only --addr may name an address beyond loopback", err)
	}
	if err != nil {
		return nil, err
	}
	if err := stock.LoopbackAddr(h.Addr().String()); err != nil {
		fmt.Fprintf(a.stderr, "harness: serving beyond loopback at %s: anyone who reaches it with a token acts as the person the token names\n", h.Addr())
	}
	return h, nil
}

// serve holds the workspace's store and serves it until ctx is done (or,
// with an idle bound, nobody used it for that long). then, when set, runs
// with the server up (run --serve) before the serving goes on.
func (a *app) serve(ctx context.Context, f *driveFlags, sf serveFlags, hooks serveHooks, o stock.SessionOptions) (err error) {
	p, err := a.place()
	if err != nil {
		return err
	}
	if err := serve.NotServed(ctx, p); err != nil {
		return err
	}
	o.Hold, o.Create = true, true
	s, err := a.newSession(p, f, o)
	if err != nil {
		return err
	}
	defer s.Close()
	if hooks.opened != nil {
		if err := hooks.opened(s); err != nil {
			return err
		}
	}
	if err := a.openStore(ctx, s); err != nil {
		if errors.Is(err, thread.ErrLocked) {
			return fmt.Errorf("%w; a server holds the store while it runs: stop the other harness command first", err)
		}
		return err
	}
	a.front().WarnMCP(s)
	approval := s.Approval
	var work *socketstore.Work
	drives := sf.drive
	if p.Remote == "" {
		if s.Model == "" {
			drives = 0 // a submitted thread records no model: see serveWork
		}
		work = socketstore.NewWork(s.Store, serveSettle, drives)
	}
	sv, err := a.startServer(s, approval, sf.addr, work)
	if err != nil {
		return err
	}
	defer sv.Stop()
	if work != nil {
		stop, err := a.serveWork(ctx, s, sv, work, drives)
		if err != nil {
			return err
		}
		defer stop()
	}
	if hooks.last != nil {
		defer func() {
			if lerr := hooks.last(s); err == nil {
				err = lerr
			}
		}()
	}
	if a.jsonOut() && hooks.run == nil {
		a.printJSON(map[string]any{"url": sv.URL, "pid": os.Getpid(), "workspace": p.Root, "store": p.Where(), "socket": sv.Socket})
	} else {
		fmt.Fprintf(a.stderr, "%s serving %s (workspace %s)\n", a.paint("bold", "harness:"), p.Where(), p.Root)
		fmt.Fprintf(a.stderr, "    %s\n", sv.URL)
		if p.Remote == "" {
			fmt.Fprintf(a.stderr, "    every harness command of the workspace goes through this process (%s)\n", sv.Socket)
			if hooks.run == nil {
				fmt.Fprintf(a.stderr, "    %s\n", serveDrivesLine(sf.drive, drives, s.Model))
			}
		}
	}
	if hooks.run != nil {
		if err := hooks.run(s, approval); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "harness: still serving %s until interrupted (Ctrl-C)\n", sv.URL)
	}
	idled, err := sv.Until(ctx, sf.idle)
	if idled {
		fmt.Fprintf(a.stderr, "harness: nobody used the server for %v; stopping\n", sf.idle)
	}
	return err
}

func orEmpty(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

// autoServe starts a server of the workspace in the background when the
// settings ask for one (serve.AutoStart): this harness, serving until
// nobody used it for 30 minutes.
func (a *app) autoServe(ctx context.Context, p stock.Place, settings stock.Settings, create bool) error {
	pid, url, started, err := serve.AutoStart(ctx, p, settings, create, func() (*exec.Cmd, error) {
		self, err := exec.LookPath(os.Args[0])
		if err != nil {
			return nil, err
		}
		args := []string{"serve", "--idle", "30m"}
		if a.storeDir != "" {
			args = append(args, "--store", a.storeDir)
		}
		return exec.Command(self, args...), nil
	}, 10*time.Second)
	if started && url != "" {
		fmt.Fprintf(a.stderr, "harness: started a server of this workspace (pid %d): %s\n", pid, url)
	}
	return err
}

// lastState says how the thread run --serve started stands once the
// serving stops (the page may have moved it on), and sets the exit code
// as run does. With -o json, run's own report was the JSON document.
func (a *app) lastState(s *stock.Session, th *harness.Thread) error {
	if th == nil || th.ID() == "" {
		return nil
	}
	st, err := s.Inspect(context.Background(), th.ID())
	if err != nil {
		return err
	}
	if a.jsonOut() {
		a.code = drive.ExitOf(st.Status)
		return nil
	}
	a.code = exitOK
	return a.report(st, nil, s)
}
