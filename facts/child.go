package facts

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The kinds of a delegation: a parent thread spawns a child thread for a
// task, waits on it as it waits for a person, and takes its outcome as an
// ingress fact.
//
//	parent                               child
//	model.turn (calls delegate)
//	child.spawned      ───────────────►  thread.spawned   (names the parent's
//	  (waits on the child)                                 child.spawned and its hash)
//	                                     user.message     (the task)
//	                                     …                (the child's own work)
//	child.reported     ◄───────────────  thread.ended     (its outcome: the
//	  (names the child's final head)                       child's last fact)
//
// The child's id is derived from the parent's id and the spawning key,
// thread.ended is appended once (its key is "end"), and the report's key
// is derived from the child's id and final head: however often either
// side crashes, there is one child and one report.
const (
	// KindChildSpawned: a delegation spawned a child thread (ChildSpawned),
	// or refused to. Appended to the parent by its spawn transition.
	KindChildSpawned Kind = "child.spawned"
	// KindThreadSpawned: this thread is the child of another
	// (ThreadSpawned). A child's first fact, appended with its task.
	KindThreadSpawned Kind = "thread.spawned"
	// KindThreadEnded: a child thread ended and its outcome is final
	// (ThreadEnded). A child's last fact, appended from outside (its key
	// is EndKey).
	KindThreadEnded Kind = "thread.ended"
	// KindChildReported: a child's outcome, posted into its parent
	// (ChildReported) under a key derived from the child's id and final
	// head (ReportKey).
	KindChildReported Kind = "child.reported"
	// KindThreadStopped: a person, or a parent, stopped the thread
	// (ThreadStopped): nothing more runs in it. Posted from outside.
	KindThreadStopped Kind = "thread.stopped"
	// KindStopRequested: a person asked to stop the thread while another
	// process drove it (StopRequested). Posted from outside; nothing new
	// runs after it, the driving process cuts off what it runs (an
	// action's record, action.interrupted or its completion, may follow),
	// and whoever holds the thread next appends thread.stopped.
	KindStopRequested Kind = "stop.requested"
)

func init() {
	register[ChildSpawned](KindChildSpawned)
	register[ThreadSpawned](KindThreadSpawned)
	register[ThreadEnded](KindThreadEnded)
	register[ChildReported](KindChildReported)
	register[ThreadStopped](KindThreadStopped)
	register[StopRequested](KindStopRequested)
}

// EndKey is the idempotency key of a child's thread.ended: its cause is
// "ingress/end", so a child ends once.
const EndKey = "end"

// SpawnKey is the idempotency key of a child's thread.spawned: its cause
// is "ingress/spawn".
const SpawnKey = "spawn"

// ReportKey is the idempotency key under which a child's outcome is
// posted into its parent: derived from the child's id and its final head
// (seq and hash), so that reporting the same end twice appends once.
func ReportKey(child string, seq uint64, hash string) string {
	if len(hash) > 16 {
		hash = hash[:16]
	}
	return fmt.Sprintf("child-%s-%d-%s", child, seq, hash)
}

// EndStatus is how a child thread ended.
type EndStatus string

// The end statuses.
const (
	// EndDone: the child finished its task.
	EndDone EndStatus = "done"
	// EndFailed: a step of the child failed for good.
	EndFailed EndStatus = "failed"
	// EndStopped: a limit (its budget) or a person or its parent stopped it.
	EndStopped EndStatus = "stopped"
)

// Validate accepts done, failed and stopped.
func (s EndStatus) Validate() error { return oneOf("status", s, EndDone, EndFailed, EndStopped) }

// ChildSpawned is the payload of child.spawned: the parent's record of a
// delegation, before the child exists. Everything the child is given is
// here, decided from the parent's log: its id, its task, the tools it may
// use (the parent's, or some of them) and its budget (never more than the
// parent has left).
type ChildSpawned struct {
	// Child is the child thread's id.
	Child string `msgpack:"child,omitempty" json:"child,omitempty"`
	// CallID is the ref of the call that delegated ("<turn>-<call id>").
	CallID string `msgpack:"call_id,omitempty" json:"call_id,omitempty"`
	Task   string `msgpack:"task,omitempty" json:"task,omitempty"`
	// Tools are the tools the child may use, each one of the parent's.
	Tools []string `msgpack:"tools,omitempty" json:"tools,omitempty"`
	// MaxTurns and MaxTokens are the child's budget; 0 is no bound.
	MaxTurns  int   `msgpack:"max_turns,omitempty" json:"max_turns,omitempty"`
	MaxTokens int64 `msgpack:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	// Agent, when set, is the agent file the delegation named, as the
	// runtime read it: the child's tools and budget are within it.
	Agent *AgentFile `msgpack:"agent,omitempty" json:"agent,omitempty"`
	// Worktree, when set, is the child's own worktree of the workspace,
	// made for it when it was spawned: it works there, not in the
	// workspace.
	Worktree *Worktree `msgpack:"worktree,omitempty" json:"worktree,omitempty"`
	// WorktreeError, when set, says why the child works in the
	// workspace though its delegation gave it a worktree of its own: the
	// worktree could not be made.
	WorktreeError string `msgpack:"worktree_error,omitempty" json:"worktree_error,omitempty"`
	// Refused, when set, says why no child was spawned: the call's
	// arguments, a tool the parent does not have, a spent budget. The
	// call then ends with this reason.
	Refused string `msgpack:"refused,omitempty" json:"refused,omitempty"`
}

// AgentFile is the record of an agent file a delegation named: its name,
// where it was read (scope and path), the digest of its bytes, and its
// instructions, which the child's model is given after the system prompt.
// A replay reads this record, never the file.
type AgentFile struct {
	Name string `msgpack:"name,omitempty" json:"name,omitempty"`
	// Scope is "project" (.harness/agents in the workspace) or "user".
	Scope  string `msgpack:"scope,omitempty" json:"scope,omitempty"`
	Path   string `msgpack:"path,omitempty" json:"path,omitempty"`
	Digest string `msgpack:"digest,omitempty" json:"digest,omitempty"`
	// Instructions are the file's body.
	Instructions string `msgpack:"instructions,omitempty" json:"instructions,omitempty"`
	// Sandbox is "read-only" when the file says so: the child is offered
	// only the tools that read and those whose commands can run with the
	// workspace read-only, and runs them so; "" is its parent's.
	Sandbox string `msgpack:"sandbox,omitempty" json:"sandbox,omitempty"`
	// Model, when set, is the model the child runs on, as the file named
	// it (a spec: "openai:MODEL", "anthropic:MODEL", "scripted:FILE"):
	// set only when it is not the parent's and the file could choose it
	// (the user's own, or one the person trusted).
	Model string `msgpack:"model,omitempty" json:"model,omitempty"`
}

// agentName is what an agent's name may be.
var agentName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9_-]{1,64}$`) }) // at first use, not at start-up

// ValidAgentName reports whether name may name an agent file: 1 to 64 of
// a-z, 0-9, '-' and '_'.
func ValidAgentName(name string) bool { return agentName().MatchString(name) }

// Validate requires a name and a digest, and a sandbox that is "" or
// read-only.
func (a *AgentFile) Validate() error {
	if a == nil {
		return nil
	}
	err := errors.Join(required("agent.name", a.Name), required("agent.digest", a.Digest))
	if a.Sandbox != "" && a.Sandbox != SandboxReadOnly {
		err = errors.Join(err, fmt.Errorf("agent.sandbox %q is not %q", a.Sandbox, SandboxReadOnly))
	}
	return err
}

// Validate requires a call id, and a child and a task unless refused.
func (p ChildSpawned) Validate() error {
	err := required("call_id", p.CallID)
	if p.Refused == "" {
		err = errors.Join(err, required("child", p.Child), required("task", strings.TrimSpace(p.Task)))
	}
	if p.MaxTurns < 0 || p.MaxTokens < 0 {
		err = errors.Join(err, errors.New("a budget is ≥ 0"))
	}
	for i, t := range p.Tools {
		if t == "" {
			err = errors.Join(err, fmt.Errorf("tools[%d]: missing name", i))
		}
	}
	return errors.Join(err, p.Agent.Validate())
}

// ThreadSpawned is the payload of thread.spawned, a child's first fact:
// the parent, its child.spawned fact (seq and hash) and the spawning key,
// and what the child was given. The child's hash chain starts from it, so
// a child's log commits to the parent's record of its spawn.
type ThreadSpawned struct {
	Parent string `msgpack:"parent,omitempty" json:"parent,omitempty"`
	// Seq and Hash (hex) are the parent's child.spawned fact.
	Seq  uint64 `msgpack:"seq,omitempty" json:"seq,omitempty"`
	Hash string `msgpack:"hash,omitempty" json:"hash,omitempty"`
	// Key is the spawning transition's key in the parent.
	Key       string   `msgpack:"key,omitempty" json:"key,omitempty"`
	CallID    string   `msgpack:"call_id,omitempty" json:"call_id,omitempty"`
	Task      string   `msgpack:"task,omitempty" json:"task,omitempty"`
	Tools     []string `msgpack:"tools,omitempty" json:"tools,omitempty"`
	MaxTurns  int      `msgpack:"max_turns,omitempty" json:"max_turns,omitempty"`
	MaxTokens int64    `msgpack:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	// Agent is the agent file of the spawn, as its parent recorded it.
	Agent *AgentFile `msgpack:"agent,omitempty" json:"agent,omitempty"`
	// Worktree is the child's own worktree, as its parent recorded it.
	Worktree *Worktree `msgpack:"worktree,omitempty" json:"worktree,omitempty"`
}

// Validate requires the parent, the spawn fact's seq and hash, and the key.
func (p ThreadSpawned) Validate() error {
	err := errors.Join(required("parent", p.Parent), required("hash", p.Hash), required("key", p.Key), p.Agent.Validate())
	if p.Seq == 0 {
		err = errors.Join(err, errors.New("missing seq"))
	}
	return err
}

// ThreadEnded is the payload of thread.ended: a child's outcome, final.
type ThreadEnded struct {
	Status EndStatus `msgpack:"status,omitempty" json:"status,omitempty"`
	// Reason says why a child failed or stopped.
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
	// Result is the child's last word to its parent: the text of its last
	// model turn.
	Result string `msgpack:"result,omitempty" json:"result,omitempty"`
	// Turns and Tokens are what the child used; USD what its priced turns
	// cost (see ModelTurn.Cost), its own children's included.
	Turns  int     `msgpack:"turns,omitempty" json:"turns,omitempty"`
	Tokens int64   `msgpack:"tokens,omitempty" json:"tokens,omitempty"`
	USD    float64 `msgpack:"usd,omitempty" json:"usd,omitempty"`
	// Worktree is what the child left in its own worktree, when it had
	// one.
	Worktree *WorktreeResult `msgpack:"worktree,omitempty" json:"worktree,omitempty"`
}

// Validate requires a known status.
func (p ThreadEnded) Validate() error { return p.Status.Validate() }

// ChildReported is the payload of child.reported: a child's outcome in
// its parent, naming the child's final head (its thread.ended fact).
type ChildReported struct {
	Child string `msgpack:"child,omitempty" json:"child,omitempty"`
	// CallID is the ref of the call that spawned the child.
	CallID string `msgpack:"call_id,omitempty" json:"call_id,omitempty"`
	// Seq and Hash (hex) are the child's final head.
	Seq    uint64    `msgpack:"seq,omitempty" json:"seq,omitempty"`
	Hash   string    `msgpack:"hash,omitempty" json:"hash,omitempty"`
	Status EndStatus `msgpack:"status,omitempty" json:"status,omitempty"`
	Reason string    `msgpack:"reason,omitempty" json:"reason,omitempty"`
	Result string    `msgpack:"result,omitempty" json:"result,omitempty"`
	Turns  int       `msgpack:"turns,omitempty" json:"turns,omitempty"`
	Tokens int64     `msgpack:"tokens,omitempty" json:"tokens,omitempty"`
	USD    float64   `msgpack:"usd,omitempty" json:"usd,omitempty"`
	// Worktree is what the child left in its own worktree (its
	// thread.ended's).
	Worktree *WorktreeResult `msgpack:"worktree,omitempty" json:"worktree,omitempty"`
}

// Validate requires the child, its head and a known status.
func (p ChildReported) Validate() error {
	err := errors.Join(required("child", p.Child), required("hash", p.Hash), p.Status.Validate())
	if p.Seq == 0 {
		err = errors.Join(err, errors.New("missing seq"))
	}
	return err
}

// ThreadStopped is the payload of thread.stopped.
type ThreadStopped struct {
	By     string `msgpack:"by,omitempty" json:"by,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}

// StopRequested is the payload of stop.requested: who asked and why, as
// the thread.stopped that carries it out will say.
type StopRequested struct {
	By     string `msgpack:"by,omitempty" json:"by,omitempty"`
	Reason string `msgpack:"reason,omitempty" json:"reason,omitempty"`
}
