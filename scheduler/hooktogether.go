package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// The before_tool hooks of a turn run side by side when the thread's
// system.configured records the rule (facts.SystemConfigured.HooksTogether;
// logs written before record none, and fold by the rule of one hook at a
// time, each its own transition keyed hook/before_tool/<call>/<index>):
//
//	action.requested …          every call of the turn is requested first
//	                            (no hook runs while one is still to be)
//	→ hook.ran before_tool ×n   the next hook due of each call that waits on
//	                            one, all at once, in one transition: their
//	                            facts are appended together, in call order
//	→ … again, for calls whose hooks are not all run (a call's own hooks
//	    still run one after another: a rewrite is what the next one reads)
//
// The key of a run of several is the key of its first call's hook with
// how many more ran with it: "hook/before_tool/<call>/<index>+<more>". It
// is derived from the log and is never enabled twice: the first call's
// hook, once recorded, is never due again. A run of one has the key it has
// under the old rule. A process that dies while they run records none of
// them, and they all run again on resume.

// maxHooksAtOnce bounds how many hook processes one transition runs at
// once; the others start as those end.
const maxHooksAtOnce = 8

// dueHook is hook i due before call c, about the fact at seq.
type dueHook struct {
	c   *call
	i   int
	seq uint64
}

// beforeHooks gathers the before_tool hooks due while a turn's calls are
// output (see outputCalls), to enable them as the recorded rule says.
type beforeHooks struct {
	due []dueHook
	// at is where in the transitions the first would have gone.
	at int
	// requesting: a call of the turn is still to be requested.
	requesting bool
}

// beforeHookDue enables hook i before call c: at once under the old rule,
// else gathered in hs for addBeforeHooks.
func (s *state[S]) beforeHookDue(out *fold.Output[S], hs *beforeHooks, c *call, i int, seq uint64) {
	if !s.system.HooksTogether {
		out.Transitions = append(out.Transitions, s.beforeHook(c, i, seq))
		return
	}
	if len(hs.due) == 0 {
		hs.at = len(out.Transitions)
	}
	hs.due = append(hs.due, dueHook{c: c, i: i, seq: seq})
}

// addBeforeHooks enables the hooks gathered in hs: none while a call of the
// turn is still to be requested, one as under the old rule, several as one
// transition that runs them side by side.
func (s *state[S]) addBeforeHooks(out *fold.Output[S], hs *beforeHooks) {
	switch {
	case len(hs.due) == 0 || hs.requesting:
		return
	case len(hs.due) == 1:
		d := hs.due[0]
		out.Transitions = slices.Insert(out.Transitions, hs.at, s.beforeHook(d.c, d.i, d.seq))
		return
	}
	runs := make([]effect.Effect[S, []facts.Draft], len(hs.due))
	for k, d := range hs.due {
		runs[k] = s.beforeHook(d.c, d.i, d.seq).Effect
	}
	first := hs.due[0]
	t := fold.Transition[S]{
		Key: hookKey(facts.HookBeforeTool, first.c.ref, first.i) + "+" + strconv.Itoa(len(hs.due)-1),
		Effect: effect.Map(effect.AllLimit(maxHooksAtOnce, runs...), func(ds [][]facts.Draft) []facts.Draft {
			return slices.Concat(ds...)
		}),
	}
	out.Transitions = slices.Insert(out.Transitions, hs.at, t)
}

// checkTogether says why cause cannot be the key of a run side by side
// that p was one of, or nil: the thread records the rule, p is before a
// tool, and the run's first call is p's call or one before it in the turn.
func (s *state[S]) checkTogether(cause string, p facts.HookRan) error {
	rest, ok := strings.CutPrefix(cause, "hook/"+facts.HookBeforeTool+"/")
	if !ok || p.Event != facts.HookBeforeTool {
		return errors.New("not a run of before_tool hooks")
	}
	slash := strings.LastIndexByte(rest, '/')
	first, n, ok := strings.Cut(rest[max(slash, 0):], "+")
	if slash < 0 || !ok {
		return errors.New("not a run side by side")
	}
	if !s.system.HooksTogether {
		return errors.New("the thread records no hooks_together: its hooks ran one at a time")
	}
	if i, err := strconv.Atoi(strings.TrimPrefix(first, "/")); err != nil || i < 0 {
		return fmt.Errorf("hook index %q", first)
	}
	if m, err := strconv.Atoi(n); err != nil || m < 1 {
		return fmt.Errorf("count %q", n)
	}
	at := slices.IndexFunc(s.calls, func(c *call) bool { return c.ref == rest[:slash] })
	mine := slices.IndexFunc(s.calls, func(c *call) bool { return c.ref == p.Call })
	if at < 0 || mine < at {
		return fmt.Errorf("its first call %s is not %s or a call before it in the turn", rest[:slash], p.Call)
	}
	return nil
}
