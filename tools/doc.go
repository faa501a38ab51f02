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
// beneath the root, checked as the path is opened, so there is no window
// between a check and its use. (os.Root also refuses absolute link targets,
// even ones inside the root.) write_file and edit_file also refuse paths
// the runtime's workspace observer leaves out — the root's .harness and any
// .git — since a write there would be an effect nobody could observe, and
// the paths given with [WithProtected]. The refusal applies to where a path
// leads, not only to how it is written: its parent directories and the
// path itself are resolved inside the root, following symlinks as os.Root
// does, so a link g -> .git does not open g/hooks to a write; a protected
// path that is itself a symlink protects where it leads too.
// run_command is not confined beyond its working directory; that is what
// the execute capability and the confirmation are for.
//
// # run_command
//
// A command is one shell command line, run as sh -c (cmd /C on Windows)
// in the workspace directory, with no stdin and the harness's environment
// less the model providers' credentials — OPENAI_API_KEY, OPENAI_ADMIN_KEY,
// OPENAI_ORG_ID, OPENAI_PROJECT_ID, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN
// and every variable whose name ends in _API_KEY — and the variables named
// with [WithEnvDrop], so that a command such as env does not put them in
// the log and before the model. (That is hygiene, not a sandbox: a command
// can still read whatever the user running the harness can.)
// A line rather than an argv, because a model writes shell — pipes,
// redirections, "cd sub && go test" — and an argv would not make a call
// safer: running anything at all is what the execute capability and the
// confirmation guard, and the person confirming sees the very string the
// shell runs. A call may set timeout_seconds, up to a maximum
// ([Limits.MaxCommandTimeout]); on Unix the shell runs in a new process
// group, and on the timeout or a done context the whole group is killed,
// children and grandchildren too. When the shell exits by itself, whatever
// it left in its group is killed as well: nothing a command started keeps
// changing the workspace after the runtime has observed it. The group is
// led by a watcher, a small shell that holds the read end of a pipe whose
// write end only the harness has: when the harness dies without the chance
// to kill the group (SIGKILL, the OOM killer), the pipe closes and the
// watcher kills the group — the shell, pipelines, background jobs. On
// Linux the shell also has a parent-death signal (SIGKILL). Only what left
// the process group (setsid, a daemon) escapes. Each of stdout
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
// workspace directory could not be opened. write_file and edit_file set
// ClaimedState to "sha256:<hex>" of the bytes they wrote — only a claim;
// the runtime's observation and the declared check decide what happened.
package tools
