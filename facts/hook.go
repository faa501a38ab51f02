package facts

import (
	"errors"
	"fmt"
)

// KindHookRan: a hook ran for an event of the thread (HookRan): which
// hook, from which settings file, what it was given (by digest), how it
// exited, what it decided and how long it took. The fold reads the
// decision from this fact; a hook is never run again to learn it.
const KindHookRan Kind = "hook.ran"

func init() {
	register[HookRan](KindHookRan)
}

// The events a hook runs at.
const (
	// HookBeforeTool: a tool call was requested and has not run: the hook
	// may deny it, ask a person to confirm it, or (from the user's own
	// settings only) approve it.
	HookBeforeTool = "before_tool"
	// HookAfterTool: a tool call completed: the hook sees its result and
	// may add context the model is shown with it.
	HookAfterTool = "after_tool"
	// HookSessionStart: the thread is about to take its first model turn:
	// the hook may add context the model is shown.
	HookSessionStart = "session_start"
	// HookBeforeCompaction, HookParked and HookThreadEnd are declared by
	// settings and shown by harness config; see the README for what fires.
	HookBeforeCompaction = "before_compaction"
	HookParked           = "parked"
	HookThreadEnd        = "thread_end"
)

// HookEvents are the events a hook may be declared for, in the order
// harness config lists them.
var HookEvents = []string{HookSessionStart, HookBeforeTool, HookAfterTool, HookBeforeCompaction, HookParked, HookThreadEnd}

// The decisions a hook's run records.
const (
	// HookAllow: the hook had no objection (exit 0, no decision).
	HookAllow = "allow"
	// HookDeny: the tool call does not run; the model is told the reason.
	HookDeny = "deny"
	// HookAsk: a person must confirm the tool call.
	HookAsk = "ask"
	// HookApprove: the call is approved without a person (user scope
	// only; a project hook's approve is recorded as refused and allows).
	HookApprove = "approve"
	// HookFailed: the hook failed — a non-zero exit other than 2, a
	// timeout, output that is not JSON, a command that could not start.
	// Before a tool it denies the call (fail closed).
	HookFailed = "failed"
)

// Hook is a hook as the thread's system.configured records it: the hooks
// in force when the thread was configured, in the order they run. The
// command is kept for people; the run is looked up again by Digest in the
// settings in force when it runs, so a hook that is no longer in force
// (edited, its file no longer trusted) fails rather than runs.
type Hook struct {
	Name  string `msgpack:"name" json:"name"`
	Event string `msgpack:"event" json:"event"`
	// Matcher is the tool-name glob it is limited to ("" every tool).
	Matcher string `msgpack:"matcher,omitempty" json:"matcher,omitempty"`
	// Command is the command as written (a shell string, or argv joined
	// with spaces), for people.
	Command string `msgpack:"command,omitempty" json:"command,omitempty"`
	// Scope is user, project or local; Path and FileDigest the settings
	// file it came from.
	Scope      string `msgpack:"scope" json:"scope"`
	Path       string `msgpack:"path,omitempty" json:"path,omitempty"`
	FileDigest string `msgpack:"file_digest,omitempty" json:"file_digest,omitempty"`
	// Digest identifies the hook's declaration (its scope and spec).
	Digest string `msgpack:"digest" json:"digest"`
}

// HookRan is the payload of hook.ran.
type HookRan struct {
	Event string `msgpack:"event" json:"event"`
	// Hook is the index of the hook among the thread's recorded hooks,
	// and its name, scope and digest as recorded there.
	Hook   int    `msgpack:"hook" json:"hook"`
	Name   string `msgpack:"name" json:"name"`
	Scope  string `msgpack:"scope" json:"scope"`
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// Call is the call ref (before_tool) or action id (after_tool) the
	// run was for; "" for the thread's own events.
	Call string `msgpack:"call,omitempty" json:"call,omitempty"`
	Tool string `msgpack:"tool,omitempty" json:"tool,omitempty"`
	// Input is the SHA-256 of the JSON document the hook was given.
	Input string `msgpack:"input" json:"input"`
	// Exit is the exit code; -1 when it did not exit by itself.
	Exit     int    `msgpack:"exit" json:"exit"`
	Decision string `msgpack:"decision" json:"decision"`
	// Reason is why it decided (its reason, or its stderr after exit 2),
	// or why it failed.
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Context is what the hook adds for the model.
	Context string `msgpack:"context,omitempty" json:"context,omitempty"`
	// Args are the arguments a before_tool hook rewrote the call's to
	// (its updatedInput), as one compact JSON object; "" when it did not.
	// ArgsDigest is the SHA-256 of the arguments it was given (the
	// model's, or an earlier hook's rewrite). The call runs with the last
	// rewrite only after it is requested, checked and put to the policy
	// anew (see the scheduler).
	Args       string `msgpack:"args,omitempty" json:"args,omitempty"`
	ArgsDigest string `msgpack:"args_digest,omitempty" json:"args_digest,omitempty"`
	// Refused says what the hook answered that its scope may not decide
	// (an approve from a project file), and was left out.
	Refused    string `msgpack:"refused,omitempty" json:"refused,omitempty"`
	DurationMS int64  `msgpack:"duration_ms" json:"duration_ms"`
	// Stdout and Stderr are its output, each cut at MaxHookOutput bytes.
	Stdout string `msgpack:"stdout,omitempty" json:"stdout,omitempty"`
	Stderr string `msgpack:"stderr,omitempty" json:"stderr,omitempty"`
	// Network, for a hook run in a sandbox with a network allow-list, is
	// every connection it made through the proxy, as harness's proxy saw
	// them (see Report.Network).
	Network *Network `msgpack:"network,omitempty" json:"network,omitempty"`
}

// MaxHookOutput bounds each of a hook's stdout and stderr as recorded.
const MaxHookOutput = 4 << 10

// Validate requires the event, the hook's name and scope, the input digest
// and a known decision; an approve only from the user's scope.
func (p HookRan) Validate() error {
	err := errors.Join(oneOf("event", p.Event, HookEvents...), required("name", p.Name), required("scope", p.Scope),
		required("input", p.Input), oneOf("decision", p.Decision, HookAllow, HookDeny, HookAsk, HookApprove, HookFailed))
	if p.Network != nil {
		err = errors.Join(err, p.Network.Validate())
	}
	if p.Decision == HookApprove && p.Scope != "user" {
		err = errors.Join(err, fmt.Errorf("decision approve from scope %q: only a user-scope hook may approve", p.Scope))
	}
	if p.Args != "" {
		switch {
		case p.Event != HookBeforeTool:
			err = errors.Join(err, fmt.Errorf("args on a %s run: only a before_tool hook may rewrite a call's arguments", p.Event))
		case p.Decision == HookDeny || p.Decision == HookFailed:
			err = errors.Join(err, fmt.Errorf("args on a run that decided %s", p.Decision))
		case len(p.ArgsDigest) != 64:
			err = errors.Join(err, fmt.Errorf("args without the digest of the arguments the hook was given"))
		}
		if e := CheckJSON([]byte(p.Args)); e != nil || p.Args[0] != '{' {
			err = errors.Join(err, fmt.Errorf("args: want one JSON object"))
		}
	}
	if p.Hook < 0 {
		err = errors.Join(err, fmt.Errorf("hook %d: want an index", p.Hook))
	}
	if len(p.Stdout) > MaxHookOutput || len(p.Stderr) > MaxHookOutput {
		err = errors.Join(err, fmt.Errorf("output over %d bytes", MaxHookOutput))
	}
	return err
}
