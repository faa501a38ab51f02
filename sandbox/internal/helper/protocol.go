package helper

import (
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Protocol is the version of what the harness and its helper say to
// each other (the request, the messages, the files). A helper told
// another version refuses to run: a harness-sandbox installed from
// another build of harness is never half understood.
const Protocol = 10

// Env names the variable that makes a process the helper: its value is
// the mode and the protocol, "run:1" or "probe:1" (see Value).
const Env = "HARNESS_SANDBOX_HELPER"

// The modes.
const (
	// Run: set up the sandbox and run the request's command.
	Run = "run"
	// Probe: only set up the namespaces and a /proc, then exit.
	Probe = "probe"
	// Launch: be the launcher, which starts each command's helper (in
	// mode Run, in new namespaces) when the harness asks (see
	// LaunchRequest).
	Launch = "launch"
	// Spare: a helper the launcher starts, in new namespaces of its own,
	// before it is asked for one, so that the Go runtime's start and the
	// namespaces' making are not part of the next command's start. It
	// waits for its files on FDSpare (one packet, the files attached,
	// which become its fds 0 to 5, or 6, in the order of
	// LaunchRequest's), then is a helper of mode Run. It serves one
	// command, and has seen none before it.
	Spare = "spare"
	// SpareNetwork: a spare for commands with the network (in the
	// harness's network namespace); Spare is one for commands without.
	SpareNetwork = "spare-network"
)

// FDSpare is a spare helper's end of its socket to the launcher
// (SOCK_SEQPACKET), on which its files arrive.
const FDSpare = 3

// FDLauncher is the launcher's end of its socket to the harness
// (SOCK_SEQPACKET): a LaunchRequest a packet in, LaunchMessages out.
const FDLauncher = 3

// LaunchRequest asks the launcher to start one command's helper. Its
// packet carries the helper's files (SCM_RIGHTS), which become its fds 0
// to 5 (and 6, with a proxy) in this order: stdin, stdout, stderr, the
// request, the lifeline, the status pipe and, with Request.Proxy, the
// proxy's socket.
type LaunchRequest struct {
	// ID is the harness's, and names the answers.
	ID uint64 `json:"id"`
	// Network: the helper shares the harness's network namespace.
	Network bool `json:"network,omitempty"`
	// Env is the helper's whole environment.
	Env []string `json:"env"`
	// SpareLife bounds how long the spare helper started after this
	// request waits for the next, unused, before the launcher ends it;
	// zero, or more than the launcher's own bound (30 s), is that bound.
	SpareLife time.Duration `json:"spare_life,omitempty"`
}

// LaunchMessage is the launcher's answer to a LaunchRequest: the helper
// started (Pid, its pidfd attached) or Error; later, the helper ended
// (Ended, its wait status).
type LaunchMessage struct {
	ID     uint64 `json:"id"`
	Pid    int    `json:"pid,omitempty"`
	Error  string `json:"error,omitempty"`
	Ended  bool   `json:"ended,omitempty"`
	Status int    `json:"status,omitempty"`
}

// The helper's files (fds 0, 1 and 2 are the command's stdin, stdout and
// stderr):
//
//	fd 3        the request (JSON), which the harness writes and closes
//	fd 4        the lifeline: the harness holds the write end; its end of
//	            file means the harness is gone
//	fd 5        messages to the harness (JSON lines): started or error,
//	            then the shell's exit
//	fd 6        with Request.Proxy only: a Unix socket on which the helper
//	            sends the proxy's listening socket (SCM_RIGHTS), made in
//	            the command's network namespace, before it starts the shell
const (
	FDRequest  = 3
	FDLifeline = 4
	FDStatus   = 5
	FDProxy    = 6
)

// ProxyPort is the port on the command's loopback where the helper makes
// the proxy's listening socket.
const ProxyPort = 3128

// ExitProtocol is the helper's exit code when it was told a protocol it
// does not speak, or a mode it does not know.
const ExitProtocol = 2

// Value is Env's value for mode at this Protocol.
func Value(mode string) string { return mode + ":" + strconv.Itoa(Protocol) }

// Request is what the harness tells its helper: everything already
// resolved, the nested stores (in Hidden) and the nested git directories
// (in Pins and ReadOnly) included.
type Request struct {
	Line     string   `json:"line"`
	Dir      string   `json:"dir"`
	Env      []string `json:"env"`
	Writable []string `json:"writable"`
	// Refer are the writable roots beside Dir where a file may be linked
	// or moved in from another directory (Landlock's REFER): the git
	// directories of a linked worktree. Not the temporary directory nor
	// the Go cache.
	Refer    []string `json:"refer,omitempty"`
	ReadOnly []string `json:"read_only"`
	// Pins are bind-mounted onto themselves before anything else, in
	// this order, so that none can be renamed, removed or replaced: the
	// workspace's git directory, and the links and directories the way of
	// a .git or .harness link passes. A symbolic link is pinned itself,
	// not followed.
	Pins []string `json:"pins,omitempty"`
	// Sealed are directories made read-only after the pins, before
	// ReadOnly, each directory in them when the command starts then bound
	// writable onto itself again: the command may write in what it found
	// there, but make, remove or rename nothing in them, and what another
	// process makes there while it runs is out of its reach (a repository's
	// .git/worktrees: a worktree added meanwhile).
	Sealed  []string `json:"sealed,omitempty"`
	Hidden  []string `json:"hidden"`
	Network bool     `json:"network"`
	// Proxy: listen on ProxyPort of the loopback and send the socket on
	// FDProxy (see there).
	Proxy bool `json:"proxy,omitempty"`
	ABI   int  `json:"abi"`
	// Stdin: the shell gets the helper's stdin (Cmd.Stdin), not /dev/null.
	Stdin bool `json:"stdin,omitempty"`
}

// Message is one line the helper writes on fd 5. Exited comes once every
// process of the command has ended: the helper kills what the shell left
// and reaps it before it says how the shell ended.
type Message struct {
	Started bool   `json:"started,omitempty"`
	Error   string `json:"error,omitempty"`
	Exited  bool   `json:"exited,omitempty"`
	Code    int    `json:"code,omitempty"`
	Signal  int    `json:"signal,omitempty"`
}

// GitControl are the entries of a git directory that can make git run a
// program or read another config: hooks/, config and info/ (made when
// missing, to be covered), and commondir and config.worktree (covered
// where they exist).
var GitControl = []string{"hooks", "config", "info", "commondir", "config.worktree"}

// MaxNestedGit bounds how many nested git directories one command's
// start keeps, so that a tree of them cannot slow every command: a
// command does not start in a workspace that holds more (which of them
// to keep cannot be left to the order of names a command chooses).
const MaxNestedGit = 64

// MakeGitControl makes the missing hooks/ and info/ (0755) and config
// (empty) of the git directory d, so that they can be covered read-only;
// it reports whether d is a directory (not a link: nothing is made
// through one).
func MakeGitControl(d string) bool {
	fi, err := os.Lstat(d)
	if err != nil || !fi.IsDir() {
		return false
	}
	_ = os.Mkdir(filepath.Join(d, "hooks"), 0o755)
	_ = os.Mkdir(filepath.Join(d, "info"), 0o755)
	// O_EXCL: a link there is not followed.
	if f, err := os.OpenFile(filepath.Join(d, "config"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
		_ = f.Close()
	}
	return true
}
