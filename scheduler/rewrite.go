package scheduler

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// A before_tool hook may rewrite a call's arguments (its run's
// facts.HookRan.Args). The call's first request was recorded with the
// model's arguments, before the hooks ran; once every hook has said and
// none denied, the rewritten call is requested anew, as action
// "<ref>.hook", and that request decides everything the model's did: the
// arguments are checked as the model's are (one JSON object, valid for
// the tool), the capability and the policy are worked out from them, the
// sandbox and check declared for them. The fold then reads that request
// in place of the first (which never runs), so a person is asked about,
// and the tool runs with, the rewritten arguments. A later hook is given
// the arguments as an earlier one left them; the last rewrite counts.
// A delegation's arguments are not rewritten: the hook's rewrite refuses
// it.

// rewriteSuffix ends the action id of a rewritten call's request.
const rewriteSuffix = ".hook"

// rewriteID is the action id of call ref's request with rewritten
// arguments.
func rewriteID(ref string) string { return ref + rewriteSuffix }

// rewriter is the last before_tool run of c that rewrote its arguments,
// or nil.
func (c *call) rewriter() *facts.HookRan {
	for i := len(c.hooks) - 1; i >= 0; i-- {
		if c.hooks[i].Args != "" {
			return &c.hooks[i]
		}
	}
	return nil
}

// args are the arguments c runs with: the last hook's rewrite, else the
// model's.
func (c *call) args() string {
	if r := c.rewriter(); r != nil {
		return r.Args
	}
	return c.call.Args
}

// effective is c's call with the arguments it runs with.
func (c *call) effective() facts.ToolCall {
	tc := c.call
	tc.Args = c.args()
	return tc
}

// needsRewrite reports whether c's hooks are done, rewrote its
// arguments, and the call has not been requested with them.
func (c *call) needsRewrite(a *Action) bool {
	return c.rewriter() != nil && len(c.attempts) == 1 && a.ID == c.ref && a.Started == nil && a.Completed == nil && c.asked == nil
}

// requestRewritten enables the request of c with its rewritten
// arguments, decided as a new call's is.
func (s *state[S]) requestRewritten(c *call) fold.Transition[S] {
	r := c.rewriter()
	return s.requestWith(c, rewriteID(c.ref), c.effective(), false,
		fmt.Sprintf("denied: hook %s (%s) rewrote the arguments, and the rewrite is refused", r.Name, r.Scope))
}

// rewriteNote is what a confirmation of a rewritten call says: which hook
// rewrote it, and what the model had asked for.
func rewriteNote(c *call) string {
	r := c.rewriter()
	if r == nil {
		return ""
	}
	return fmt.Sprintf("hook %s (%s) rewrote the arguments; the model asked for %s", r.Name, r.Scope, oneLine(c.call.Args, 300))
}

// argsDigest is the SHA-256 of the arguments a hook was given.
func argsDigest(args []byte) string {
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:])
}

// checkRewriteRequested is the verifier's question about a request with
// rewritten arguments: its call's hooks are done, none denied, one
// rewrote, the first request has not run, and the request carries the
// rewrite.
func (s *state[S]) checkRewriteRequested(c *call, p facts.ActionRequested) error {
	a := c.last()
	switch {
	case a == nil || !c.needsRewrite(a):
		return fmt.Errorf("action %s: call %s has no rewrite of its arguments by a hook waiting to be requested", p.ActionID, c.ref)
	case c.hookDenied() || s.gate(c).pending >= 0:
		return fmt.Errorf("action %s: call %s's before_tool hooks have not all allowed it", p.ActionID, c.ref)
	case p.Payload == nil || canonicalArgs(string(p.Payload)) != canonicalArgs(c.args()):
		return fmt.Errorf("action %s: its arguments are not the ones hook %s rewrote call %s to", p.ActionID, c.rewriter().Name, c.ref)
	}
	return nil
}
