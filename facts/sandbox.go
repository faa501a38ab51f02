package facts

import "fmt"

// The sandbox modes a Sandbox record names (see package sandbox).
const (
	// SandboxWorkspaceWrite: a command reads the file system and writes
	// only its writable roots (the workspace, its private temporary
	// directory, the workspace's Go build cache).
	SandboxWorkspaceWrite = "workspace-write"
	// SandboxReadOnly: a command writes only its private temporary
	// directory and the workspace's Go build cache, not the workspace.
	SandboxReadOnly = "read-only"
	// SandboxOff: no sandbox; the command runs with the user's authority
	// (and the allow-listed environment).
	SandboxOff = "off"
)

// Sandbox is the record of where a command may reach: what a person is
// shown before approving a command and what replay tells back. It is kept
// on system.configured (the thread's sandbox) and on each action.requested
// of a command (the sandbox that command runs in). Package sandbox makes it
// (Spec.Record); this is only its written form.
type Sandbox struct {
	// Mode is workspace-write, read-only or off.
	Mode string `msgpack:"mode,omitempty" json:"mode,omitempty"`
	// Network reports whether the command may use the network. Without it
	// the command has a network namespace of its own with only loopback.
	Network bool `msgpack:"network,omitempty" json:"network,omitempty"`
	// NetworkAllow, when set (and Network is not), is the allow-list of
	// hosts the command reaches through the harness's proxy, its only
	// route out ("github.com", "*.example.com:443", "127.0.0.1:8080").
	NetworkAllow []string `msgpack:"network_allow,omitempty" json:"network_allow,omitempty"`
	// Writable is the absolute directories the command may write: the
	// workspace (in workspace-write), the workspace's Go build cache, and
	// any more roots the configuration names.
	Writable []string `msgpack:"writable,omitempty" json:"writable,omitempty"`
	// Temp is where the command's private temporary directory ($TMPDIR) is
	// made, as a pattern ("/tmp/harness-cmd-*"): one per command, writable
	// by it alone, removed when it ends.
	Temp string `msgpack:"temp,omitempty" json:"temp,omitempty"`
	// ReadOnly is the paths inside writable roots that the command cannot
	// change (the workspace's .git/hooks, .git/config and .git/info).
	ReadOnly []string `msgpack:"read_only,omitempty" json:"read_only,omitempty"`
	// Hidden is the paths the command cannot see at all (the store, as it
	// resolves); HiddenNames are names hidden wherever they occur under
	// the workspace (".harness": any nested store).
	Hidden      []string `msgpack:"hidden,omitempty" json:"hidden,omitempty"`
	HiddenNames []string `msgpack:"hidden_names,omitempty" json:"hidden_names,omitempty"`
	// GitRefused, when set, says which git directory the workspace's .git
	// file names and why it is not writable (it is not verifiably a linked
	// worktree's or a submodule's of the workspace): git in the workspace
	// cannot write its metadata there.
	GitRefused string `msgpack:"git_refused,omitempty" json:"git_refused,omitempty"`
	// Env is the allow-list of the environment: the names a command may
	// get from the harness's environment ("LC_*" is a prefix). Nothing
	// else is passed; values are not recorded.
	Env []string `msgpack:"env,omitempty" json:"env,omitempty"`
	// Mechanism says how the sandbox is enforced ("none" when off), and
	// LandlockABI the Landlock ABI version it applies (0 when none).
	Mechanism   string `msgpack:"mechanism,omitempty" json:"mechanism,omitempty"`
	LandlockABI int    `msgpack:"landlock_abi,omitempty" json:"landlock_abi,omitempty"`
}

// Validate requires a known mode and no empty path or name.
func (s Sandbox) Validate() error {
	if err := oneOf("mode", s.Mode, SandboxWorkspaceWrite, SandboxReadOnly, SandboxOff); err != nil {
		return err
	}
	if s.LandlockABI < 0 {
		return fmt.Errorf("landlock_abi %d is negative", s.LandlockABI)
	}
	for _, list := range []struct {
		field string
		items []string
	}{{"writable", s.Writable}, {"read_only", s.ReadOnly}, {"hidden", s.Hidden}, {"hidden_names", s.HiddenNames}, {"env", s.Env}, {"network_allow", s.NetworkAllow}} {
		for i, v := range list.items {
			if v == "" {
				return fmt.Errorf("%s[%d] is empty", list.field, i)
			}
		}
	}
	return nil
}
