package harness

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// HookRunner runs a hook's command with input on its stdin. It runs only
// a hook that is in force now — the one whose declaration has h.Digest,
// from settings the person trusts — and returns the error
// ErrHookNotInForce otherwise; it bounds the run by the hook's timeout
// and runs it where the hook's settings say (the sandbox, unless the
// user's own settings say otherwise). A cancelled ctx stops the command
// and is the error.
type HookRunner interface {
	RunHook(ctx context.Context, h facts.Hook, input []byte) (action.HookExit, error)
}

// runHook describes running hook i (h) with in on its stdin: the input
// with the workspace as cwd, its digest, and what the run decided (see
// action.DecideHook). A hook that cannot run is recorded as failed; a
// run cut short by a cancelled context records nothing, and runs again on
// resume.
func runHook(i int, h facts.Hook, in scheduler.HookInput) effect.Effect[Services, facts.HookRan] {
	return effect.FromAsync(func(ctx context.Context, svc Services) (facts.HookRan, error) {
		in.Cwd = svc.Workspace
		doc, err := json.Marshal(in)
		if err != nil {
			return facts.HookRan{}, effect.Defect(err)
		}
		sum := sha256.Sum256(doc)
		digest := hex.EncodeToString(sum[:])
		if svc.Hooks == nil {
			return facts.HookRan{Input: digest, Exit: -1, Decision: facts.HookFailed, Reason: "no hook runner: hooks cannot run here"}, nil
		}
		x, err := svc.Hooks.RunHook(ctx, h, doc)
		if ctx.Err() != nil {
			return facts.HookRan{}, ctx.Err()
		}
		if err != nil {
			x = action.HookExit{Code: -1, Failure: err.Error()}
		}
		r := action.DecideHook(in.Event, h.Scope, x)
		r.Input = digest
		return r, nil
	})
}

// hasAfterHooks reports whether any of hooks is an after_tool hook.
func hasAfterHooks(hooks []facts.Hook) bool {
	for _, h := range hooks {
		if h.Event == facts.HookAfterTool {
			return true
		}
	}
	return false
}
