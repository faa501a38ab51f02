package drive

import (
	"slices"
	"strings"
)

// ProjectAlways is the allow pattern a person is offered for "always, for
// this project" on a call of tool with args: for a command, its program
// and subcommand followed by * ("run_command:go test *" for "go test
// ./... -run X"), which the person may edit before it is kept; for any
// other call what Always gives. root is the workspace absolute paths are
// made relative to.
//
// The prefix is offered only when the command starts with a program and a
// plain subcommand word (letters, digits, '.', '_', '-', not starting
// with '-'): "sh -c …", "env X=1 …" or a lone "ls -la" would make a
// prefix that approves nearly anything, nor is one of a program that runs
// its arguments as a command (sudo, xargs, a shell, find with its -exec)
// or of a subcommand that does ("git submodule foreach", "git fetch
// --upload-pack"), so for them the command exactly
// as written is offered, as Always does. The * of a command pattern never
// matches a shell's control characters (see Pattern): "go test *" does
// not approve "go test ./... ; rm -rf ~".
func ProjectAlways(root, tool, args string) Pattern {
	s := subjectOf(root, args)
	if !s.present || !s.command {
		return Always(root, tool, args)
	}
	if prefix, ok := commandPrefix(s.raw); ok {
		return Pattern{Tool: tool, Glob: prefix + " *"}
	}
	return Always(root, tool, args)
}

// commandPrefix is the program and subcommand a command starts with ("go
// test" of "go test ./..."); ok is false when it does not start with two
// such words followed by more.
func commandPrefix(cmd string) (string, bool) {
	words := strings.Split(strings.TrimLeft(cmd, " "), " ")
	if len(words) < 3 || !plainWord(words[0], "./") || !plainWord(words[1], "") || strings.HasPrefix(words[1], "-") {
		return "", false
	}
	prog := words[0][strings.LastIndex(words[0], "/")+1:]
	if slices.Contains(runsItsArguments, prog) || slices.Contains(runsItsSubcommand[prog], words[1]) {
		return "", false
	}
	return words[0] + " " + words[1], true
}

// runsItsArguments are programs that run their arguments as another
// command or as shell text: a prefix of one approves whatever follows
// ("sudo rm *", "eval x *" with a quoted "; rm -rf ~"), so none is
// offered.
var runsItsArguments = []string{"sh", "bash", "zsh", "dash", "ksh", "fish", "eval", "exec", "env", "sudo", "doas", "su",
	"xargs", "nohup", "timeout", "nice", "time", "command", "builtin", "watch", "ssh", "busybox", "setsid", "stdbuf", "chroot",
	// An option among the arguments runs a command: find . -exec,
	// fd -x, parallel, and the wrappers that run the rest as a program.
	"find", "fd", "parallel", "flock", "ionice", "taskset", "unshare", "nsenter", "runuser", "pkexec", "strace", "ltrace",
	"script", "npx", "pnpx", "bunx", "uvx"}

// runsItsSubcommand are, by program, the subcommands that run a command
// named in their arguments or options ("git submodule foreach CMD",
// "git rebase --exec CMD", "git fetch --upload-pack=CMD", "git grep
// -O CMD", "git config" naming a program git runs later, "npm exec"): a
// prefix of one approves whatever follows, so none is offered.
var runsItsSubcommand = map[string][]string{
	"git": {"submodule", "bisect", "rebase", "filter-branch", "difftool", "mergetool", "config", "fetch", "pull", "clone",
		"ls-remote", "push", "archive", "grep", "daemon", "instaweb", "send-email", "request-pull", "remote"},
	"npm":  {"exec", "x"},
	"pnpm": {"exec", "dlx"},
	"yarn": {"exec", "dlx"},
}

// plainWord reports whether w is a word of letters, digits, '.', '_',
// '-' and the runes of also, starting with a letter, a digit, '.' or '/'.
func plainWord(w, also string) bool {
	if w == "" || w[0] == '-' || w[0] == '_' {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' || strings.ContainsRune(also, r)) {
			return false
		}
	}
	return true
}
