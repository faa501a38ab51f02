// Package sandbox decides what a command the harness runs may reach. The
// approval policy decides whether a command runs; the sandbox decides what
// it can touch at all: a command a person approved, or a rule approved, is
// still the model's, and the model is hostile.
//
// A [Spec] is a plain value: a [Mode], network or not, the workspace, the
// writable roots, the paths made read-only, the paths hidden, the
// environment's allow-list. [Default] returns the spec of a workspace and
// its store; [Spec.Record] is its written form, a [facts.Sandbox], which
// system.configured and each command's action.requested keep, so the person
// approving a command and replay see where it could reach. A [Cmd] runs one
// shell command line in it.
//
// # Modes
//
//	workspace-write  read the file system; write the workspace, the command's
//	                 private $TMPDIR and the workspace's Go build cache (the default)
//	read-only        the same, but not the workspace
//	off              no sandbox: the user's authority (explicit, and recorded)
//
// In every mode, off included, the environment is an allow-list
// ([EnvAllowList]: PATH, HOME, USER, LOGNAME, LANG, LC_*, TERM, TZ and the Go
// toolchain's own variables, plus the names Spec.Env adds), never the
// harness's environment less a deny-list: a provider's key, a token, a
// header or a base URL with a password in it does not reach a command, its
// output, the log or the model, whatever it is called. TMPDIR is a directory
// made for the command and removed after it. GOCACHE is the workspace's
// own build cache ([WorkspaceGoCache],
// os.UserCacheDir()/harness/workspaces/<hash of the path>/go-build), a
// writable root: go test and go vet work, and the user's own cache, which
// a hostile command could fill with poisoned build results for the user's
// next build, is only read; no other workspace's commands share it. A
// command in mode off gets the user's own GOCACHE (or go's default), never
// a cache a sandboxed command could write. No other cache is writable: the
// module cache, HOME and XDG_CACHE_HOME are read-only (what is not already
// downloaded cannot be; there is no network either).
//
// # What a sandboxed command can and cannot do
//
// It reads the file system as the user can, but for what is hidden; it runs
// what it can read. It writes only its writable roots. Inside them, the
// workspace's .git/hooks, .git/config and .git/info, and the same of
// each submodule's git directory under .git/modules, are read-only and
// .git cannot be renamed away (it is a mount point), so no hook,
// core.hooksPath, core.fsmonitor or filter of the command's choosing runs
// in the person's next git command, while git add and git commit work
// (objects, refs and the index stay writable; for a linked worktree or a
// submodule, its git directory and the common directory are writable
// roots, their hooks, config and info read-only). A .git file names its
// git directory, and anyone who writes the workspace can write one: what
// it names is a writable root only when it verifiably belongs to the
// workspace (a worktree's back-link and commondir, a submodule's
// core.worktree; see GitPathsOf), and never when it holds the workspace
// or the user's home. Otherwise git in the workspace cannot write its
// metadata, and the record says why (GitRefused). A .git that is a
// symbolic link (git follows it) never makes anything writable: the link
// and each link and directory of the workspace on its way are pinned (a
// link itself, not followed), so it keeps leading where it led; a git
// directory it leads to inside the workspace is treated as .git is, any
// other directory there is read-only whole, a file is read-only and read
// as a .git file; and no command starts while the way passes, or a
// directory it leads to outside the workspace lies in or holds, a
// writable root, or while it leads nowhere a command could make (see
// GitPathsOf). A .harness that is a link is kept the same way. Landlock
// grants rights per directory, so .git itself stays writable for git's
// lock files and renames, and a missing commondir, which git reads as
// soon as it exists, can be made (it cannot be made ahead and covered:
// git takes an empty one for an error). So once the command has ended
// (every process of it with it: see below), before the runtime observes
// the workspace, the action boundary removes a commondir that appeared
// in a git directory that had none (the workspace's .git, what a .git
// file leads to and its common directory, a nested repository's, a
// submodule's), a file, a link or a directory alike, and records it
// (facts.Observation.Removed; see package action, commonWatch).
// A missing config.worktree is made empty where git may read it. What git
// reads in the linked worktrees' git directories under .git/worktrees to
// find their config (commondir, gitdir, config.worktree) is read-only,
// and .git/worktrees is sealed (GitPaths.Sealed): nothing can be made or
// removed there, so a worktree added while a command runs is out of its
// reach (git worktree add fails inside a command); the submodules' git
// directories under .git/modules, with the directories that hold them,
// are pinned. A hooks directory core.hooksPath names inside the workspace
// (husky's .husky/_) and a config file an include names there are kept
// as .git/hooks is: read-only, made when missing, the way to them pinned;
// the configs read for them are the repository's (for a workspace inside a
// repository without a .git of its own, the enclosing one's), the system's and the
// person's global ones, and every file they include, parsed as git
// parses them (see GitPaths.Named). What else a command creates in a
// .git, or anywhere in a nested .git, is not refused but observed
// (package action), as an effect the person sees: none of it makes the
// person's git status run a program (objects/info/alternates and shallow
// name objects and commits; a rebase's todo list acts only in the
// person's own git rebase --continue). It cannot see the store: the workspace's
// .harness as it resolves, any nested .harness under the workspace (found
// when the command starts), and a store given elsewhere are covered by an
// empty directory no one may list, so a command can neither read the log
// nor append an answer only a person may give. In workspace-write, a
// workspace without a .harness (its store elsewhere) gets an empty one
// before the command starts, covered the same way, so a command cannot
// create a .harness/project.json the next run would read. Nor can it see
// the user's harness runtime directory ([RuntimeDir]), where the server
// of every workspace keeps its socket and its token, so it cannot answer
// through another workspace's server either. That directory is one fixed
// place per user, /run/user/<uid>/harness or /tmp/harness-<uid>, which no
// environment variable moves, and both places are hidden: a server
// started from a shell with another $XDG_RUNTIME_DIR or $TMPDIR is out of
// sight all the same. It
// cannot write outside its roots by any route: go test -exec, -toolexec or
// -c -o ../x run and write inside the same sandbox.
//
// It sees only its own processes: it is in new user, PID and mount
// namespaces with a /proc of its own, so the harness's processes, their
// environments and their files are not there, and it cannot signal them
// (kill -9 -1 reaches only the command's own). Its IPC and UTS namespaces
// are its own too: no System V shared memory, semaphore or message queue
// of another process is reachable from it. It has no terminal: not the
// person's controlling terminal (a session of its own), and no /dev entry
// but null, zero, full, random and urandom (so it cannot read the keys a
// person types at an approval prompt). It has no capabilities and
// no_new_privs: it cannot mount, unmount or gain privileges through a
// set-user-ID program. Without Spec.Network it is in a network namespace of
// its own with only loopback up: a test's own local server works, nothing
// else is reachable.
//
// With Spec.NetworkAllow (and not Spec.Network) it is in the same network
// namespace, and one more thing is there: a socket listening on
// 127.0.0.1:ProxyPort, which the helper makes in that namespace before the
// command starts and hands to the harness over a Unix socket pair
// (SCM_RIGHTS), keeping no copy. The harness accepts on it, outside the
// sandbox, and serves a netproxy.Proxy that reaches only the allow-list's
// hosts; HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and their lower-case forms
// name it. The namespace has no route anywhere else, so a client that
// ignores the variables reaches nothing; the command cannot close the
// listener, nor listen on its port. Cmd.Network says, after Wait, each
// connection the proxy allowed or refused.
//
// When the command ends, or is killed, everything it started ends: its
// first process is the sandbox's helper, and when the first process of a
// PID namespace ends the kernel kills every other, setsid daemons and double
// forks included. The helper ends when the shell exits, when the harness
// kills it (a timeout, a cancel), and when the harness dies, however it
// dies: it has a parent-death signal (SIGKILL) and a lifeline pipe whose end
// of file it watches.
//
// # How (Linux)
//
// The helper is a small program of its own, harness-sandbox
// (sandbox/cmd/harness-sandbox, installed beside the harness), started
// in new user, PID, mount and (without Spec.Network) network namespaces,
// with the harness's uid and gid mapped to themselves. It is looked for
// once per process, beside the executable, and used only when it is a
// regular file of the user's (or root's) that no one else may write, in
// a directory no one else may write, and passes a trial run; it is then
// copied into a sealed memory file and executed from there, so nothing
// written to its path afterwards (by a command, where the harness lives
// in a workspace) ever runs. That copy, started once per process (the
// launcher: the harness's child, in no namespace of its own), starts
// each command's helper from its small address space — the Go runtime
// forks a child in a new user namespace by copying the parent's page
// tables, which for a harness holding hundreds of MiB cost tens of
// milliseconds a command — and sends the harness the helper's pidfd,
// through which alone the harness signals it. While a command runs, the
// launcher starts the next command's helper ahead (a spare, in new
// namespaces of its own, which waits for its files and then serves that
// one command), so that the helper's start is not part of the next
// command's; a spare of another network setting, or one that died, is
// replaced by a helper started for the command, and one left unused 30 s
// is ended. The launcher waits for a spare's answer beside its other
// work, so one slow to take its command holds up no other (helpers are
// still started one at a time: one slow to start delays those queued
// behind it). A launched helper kills
// and reaps every other process of the command before it reports the
// shell's exit, so the command has ended then. The launcher ends with
// the harness, and its helpers with it. Without one, the program re-executes itself
// (/proc/self/exe) as the helper, which takes over before the program's
// main runs — package sandbox's init recognises it — in any program that
// imports this package: a test binary, a program of one's own; that
// costs the start of the whole program at every command. The record's
// mechanism says which. Either way the helper's environment holds only
// the variable that says what it is (and the protocol it must speak),
// removed at once; the command line and the spec arrive over a pipe,
// never in an environment or an argv. It makes its mounts private, mounts a
// fresh /proc, pins .git, bind-mounts the read-only paths read-only, covers
// the hidden ones, brings up loopback, and then, on an OS thread of its own,
// sets no_new_privs, enters a Landlock domain (read everything but /dev;
// write only the writable roots; from ABI 6 no signal or abstract Unix
// socket out of the domain; from ABI 9 no connect to a named Unix socket
// outside the writable roots), drops every capability, and starts sh -c in
// the workspace with the allow-listed environment. It reaps what is left to
// it, as an init does, and reports the shell's exit. It is not dumpable: a
// command cannot read its memory or its /proc entries.
//
// # Availability
//
// [Probe] says what this system lacks — user namespaces (tried once, with a
// trial helper), Landlock, a Landlock ABI of at least 3 (the first to control
// truncate) — and [Spec.Check] turns that into an error wrapping
// [ErrUnavailable]. A command is never run unsandboxed because the sandbox is
// missing: the caller must choose mode off, which is then recorded. Tests
// (and the command-line tests) simulate a missing feature with
// Spec.SimulateMissing or the environment variable [SimulateEnv]; a
// simulation can only make the sandbox unavailable, never weaker. On macOS,
// Windows and every other system only mode off runs.
//
// # What it does not cover
//
//   - Reading: a command reads whatever the user can (~/.ssh, a credentials
//     file), and what it prints goes to the model. Hide such paths with
//     Spec.Hidden.
//   - Named Unix sockets below ABI 9: a command can connect to one it can
//     name (an ssh-agent's, a Docker daemon's); with Spec.Network, any
//     network. The harness's own are out of its sight (RuntimeDir is
//     hidden), and their server refuses a process of another user
//     namespace.
//   - A nested .harness that does not exist when the command starts: the
//     command may create one (the harness never adopts a store it did not
//     make without saying so, and the observer records what is written
//     there). Nested stores (and nested repositories) are found when
//     the command starts, by the harness, before the helper starts: by a
//     walk of the workspace (not .git), or, with Spec.Nested, from the
//     runtime observer's reading of the whole workspace taken after the
//     last command ended (the runtime reads before every action), which
//     sees a .harness whatever it holds; a store another process makes
//     between that reading and the start is found at the next.
//   - Other repositories' hooks, in part. A repository nested in the
//     workspace is kept as the workspace's own is: its .git directory, or
//     the git directory inside the workspace its .git file or link leads
//     to (followed as git follows it), when it holds a HEAD (git takes no
//     other for one), is pinned, its hooks, config, info, commondir and
//     config.worktree read-only (the first three made when missing, by
//     Spec.Prepare before the runtime's reading, so that the record does
//     not put them on the command). No command starts while a nested .git
//     file or link leads to or through a writable root outside the
//     workspace (the Go build cache), or into the caches of harness's
//     workspaces, nor while more than helper.MaxNestedGit (64) nested git
//     directories are to be kept: which to keep cannot be left to names a
//     command chooses. A repository a command makes is observed, not
//     refused; configs a submodule's config includes are not read for
//     core.hooksPath.
//   - Resources: CPU, memory and disk are not limited, beyond run_command's
//     timeout; the workspace's Go build cache is shared by its commands.
//   - Other systems: only Linux; elsewhere, mode off.
package sandbox
