// Package tools provides the built-in workspace tools — read_file, list_files,
// write_file, edit_file and run_command — each an [action.Adapter] confined
// to one workspace directory, with the JSON Schema of its arguments, the
// capability it needs, whether a person confirms it first, and the check
// its effect declares.
//
// [New] returns the [Set] of tools for a workspace root:
//
//	tool               capability  confirms  declared check
//	read_file          read        no        none
//	list_files         read        no        none
//	write_file         write       yes       FileEquals(path, content)
//	edit_file          write       yes       FileEquals(path, the expected whole file)
//	run_command        execute     yes       none
//
// # Confinement
//
// Every path a file tool is given is resolved inside the workspace root. A
// path with ".." that climbs out, an absolute path not under the root, and
// a path through a symlink that leads out — a symlinked file, a symlinked
// parent directory, or a link a command created a moment ago — are refused
// with an error that names the path and wraps [ErrOutsideWorkspace]. The
// first two are refused lexically; the symlinks by [os.Root], which every
// file operation goes through: it follows a link only while the link stays
// beneath the root. (os.Root also refuses absolute link targets, even ones
// inside the root.)
//
// write_file and edit_file also refuse, with an error wrapping
// [ErrProtected], a path at or under a ".git" or a ".harness" at any depth
// — a repository's own files, and a store: the root's, or one that a
// later run in a subdirectory would adopt, settings and all — and the
// paths given with [WithProtected]; a write there would be an effect
// nobody observes, or one that changes what the runtime itself does. So
// are the git directories a .git file or link leads to inside the root,
// and the hooks directories (core.hooksPath) and included config files
// that the git configs name inside it (sandbox.GitPaths.Named), whose
// refusal says which config names them; and the control entries (hooks,
// config, info, commondir, config.worktree) of every git directory in
// the root — one with a HEAD and an objects directory or a commondir —
// where a nested repository's .git file or link may lead. The
// refusal applies to where a path leads, not only to how it is written:
// the path is walked one entry at a time from the root, following its
// symlinks as os.Root does, so a link g -> .git does not open g/hooks to a
// write, and a protected path that is itself a symlink protects where it
// leads too. [Set.Resolve] returns where a path leads in the same way,
// for a policy that matches rules against paths: such a rule must be
// matched against the resolved path, or docs -> .github walks around it.
//
// Each path a write uses is resolved once. The walk holds every directory
// it passes open and checks that what it opened is what it looked at (a
// directory swapped for a link or a pipe between the look and the open is
// looked at again, and refused if it keeps changing); the check of where
// the path leads is made on what the walk found; and the temporary file a
// write makes, the file edit_file reads, and the rename that replaces the
// file all happen by name in the one directory the walk opened. A
// directory swapped for a symlink to .git/hooks during a write therefore
// cannot lead the write, or its temporary file, there. What this does not
// cover is a directory the walk already holds being renamed elsewhere
// (into .git, say) while the write runs: the write follows the directory.
// A command can do that only where it may write both places, and the
// command sandbox keeps .git and .harness out of a command's reach.
//
// The file tools read and write regular files only. A named pipe, a
// device or a socket — directly or through a symlink — is refused with an
// error naming the path and what it is (wrapping [action.ErrNotRegular]);
// files are opened non-blocking (O_NONBLOCK, then checked), so no call
// ever waits in an open for a pipe's other end, and no read runs on
// without end. Every read is bounded: read_file reads at most
// [Limits.FileBytes] of a file (and says so when the file is larger),
// edit_file edits files up to that size, and list_files opens each
// directory as a directory. The declared checks read boundedly too (see
// package action).
//
// [Set.Precheck] returns the refusal a call would surely get — bad or
// duplicate-key JSON, unknown fields, a path that leaves the workspace or
// is protected — without running it, so that a runtime can refuse such a
// call without asking a person.
//
// run_command is confined by a sandbox instead (below).
//
// # run_command
//
// A command is one shell command line, run as sh -c (cmd /C on Windows)
// in the workspace directory, with no stdin. A line rather than an argv,
// because a model writes shell — pipes, redirections, "cd sub && go test"
// — and an argv would not make a call safer: whether it runs at all is
// what the execute capability and the confirmation guard, and the person
// confirming sees the very string the shell runs. What it may reach is the
// sandbox's to decide.
//
// Every command runs in the Set's sandbox (package sandbox; [WithSandbox],
// by default sandbox.Default(root, "")): in workspace-write it reads the
// file system and writes only the workspace, its private $TMPDIR and the
// workspace's Go build cache — never the store (.harness, wherever it
// resolves, and any nested one), .git/hooks, .git/config or .git/info; it has no
// network (only loopback), sees only its own processes, cannot signal the
// harness and has no terminal. read-only also keeps the workspace from
// being written. Where this system lacks what the sandbox needs (Linux
// with user namespaces and Landlock), the call fails with an error that
// says what is missing; only mode off runs a command unsandboxed, and
// only when it was chosen. In every mode the environment is an allow-list
// (sandbox.EnvAllowList and the spec's Env), not the harness's
// environment: no provider key or token reaches a command, and so none
// reaches its output, the log or the model.
//
// A call may set timeout_seconds, up to a maximum
// ([Limits.MaxCommandTimeout]). On the timeout or a done context every
// process of the command is killed; when the shell exits by itself,
// whatever it left running is killed as well: nothing a command started
// keeps changing the workspace after the runtime has observed it. In a
// sandbox that is the kernel's work: the sandbox's helper is the first
// process of the command's PID namespace, and when it ends (killed by the
// timeout, after the shell exited, or with the harness, whose death it
// follows by a parent-death signal and a lifeline pipe) every process in
// the namespace ends — setsid daemons and double forks too. In mode off
// (on Unix) the shell runs in a new process group led by a watcher, a
// small shell that holds the read end of a pipe whose write end only the
// harness has: when the harness dies without the chance to kill the group
// (SIGKILL, the OOM killer), the pipe closes and the watcher kills the
// group; on Linux the shell also has a parent-death signal. There, only
// what left the process group (setsid, a daemon) escapes. Each of stdout
// and stderr keeps its first and last halves of [Limits.OutputBytes], with
// the cut marked in the output and counted in the transcript. A non-zero
// exit is a failed report carrying the exit code; a signal is exit code -1.
//
// # Reports and errors
//
// Execute returns the tool's report — its own account, evidence of nothing
// but what it said (see package action). Whatever is wrong with a call is a
// failed report whose Error names it: malformed JSON, an unknown or missing
// field, a path outside the workspace, a missing or ambiguous edit, a
// non-zero exit (with the exit code), a timeout. The tools do not panic on
// any input. A Go error is reserved for a call that could not be carried
// out at all: the context was done, before or during the call (a running
// command is then killed, and the report still says what is known), or the
// workspace directory could not be opened. Arguments that name a key twice
// ({"path": "a", "path": "b"}) are invalid: a person shown them could not
// tell which value runs (see [facts.CheckJSON]). write_file and edit_file
// set ClaimedState to "sha256:<hex>" of the bytes they wrote — only a
// claim; the runtime's observation and the declared check decide what
// happened.
package tools
