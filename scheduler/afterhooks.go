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

// The after_tool hooks of a completed call run side by side when the
// thread's system.configured records the rule
// (facts.SystemConfigured.AfterHooksTogether; logs written before record
// none, and fold by the rule of one hook at a time, each its own
// transition keyed hook/after_tool/<action>/<index>):
//
//	action.completed
//	→ hook.ran after_tool ×n    every hook due after the action, all at
//	                            once (at most maxHooksAtOnce processes at a
//	                            time, each bounded by its own timeout), in
//	                            one transition: their facts are appended
//	                            together in the hooks' declared order,
//	                            whatever order they end in
//
// An after_tool hook only observes and annotates (what it adds is shown to
// the model with the result; it cannot deny or rewrite a call that has
// run), so no hook's answer is another's input and their order does not
// matter while they run; the order of the record is the declared one, so
// the note the model reads is the same however the processes were
// scheduled. The key of a run of several is the key of its first hook's
// run with how many more ran with it: "hook/after_tool/<action>/<index>+
// <more>"; a run of one has the key it has under the old rule. A process
// that dies while they run records none of them, and they all run again on
// resume.

// afterHooks enables the after_tool hooks due after action a of call c:
// the next one under the old rule, all of them under the recorded rule
// (one transition); ok is false when none is due.
func (s *state[S]) afterHooks(c *call, a *Action) (fold.Transition[S], bool) {
	if !s.system.AfterHooksTogether {
		i := s.nextHook(facts.HookAfterTool, c.call.Name, a.Hooks)
		if i < 0 {
			return fold.Transition[S]{}, false
		}
		return s.afterHook(c, a, i), true
	}
	due := s.dueAfter(c.call.Name, a.Hooks)
	switch len(due) {
	case 0:
		return fold.Transition[S]{}, false
	case 1:
		return s.afterHook(c, a, due[0]), true
	}
	runs := make([]effect.Effect[S, []facts.Draft], len(due))
	for k, i := range due {
		runs[k] = s.afterHook(c, a, i).Effect
	}
	return fold.Transition[S]{
		Key: hookKey(facts.HookAfterTool, a.ID, due[0]) + "+" + strconv.Itoa(len(due)-1),
		// AllLimit keeps its results in the order of runs, which is the
		// hooks' declared order: the facts are appended in it.
		Effect: effect.Map(effect.AllLimit(maxHooksAtOnce, runs...), func(ds [][]facts.Draft) []facts.Draft {
			return slices.Concat(ds...)
		}),
	}, true
}

// dueAfter are the after_tool hooks that take tool and have no record
// among ran, in declared order.
func (s *state[S]) dueAfter(tool string, ran []facts.HookRan) []int {
	var out []int
	for _, i := range s.hooksFor(facts.HookAfterTool, tool) {
		if !slices.ContainsFunc(ran, func(r facts.HookRan) bool { return r.Hook == i }) {
			out = append(out, i)
		}
	}
	return out
}

// checkAfterTogether says why cause cannot be the key of a run side by
// side of after_tool hooks that p was one of, or nil: the thread records
// the rule, the run is after p's own action, p's hook takes the call's
// tool, and the run's first hook is due and not after p's (a run's facts
// are in declared order).
func (s *state[S]) checkAfterTogether(cause string, p facts.HookRan) error {
	rest, ok := strings.CutPrefix(cause, "hook/"+facts.HookAfterTool+"/")
	if !ok || p.Event != facts.HookAfterTool {
		return errors.New("not a run of after_tool hooks")
	}
	slash := strings.LastIndexByte(rest, '/')
	if slash < 0 {
		return errors.New("not a run side by side")
	}
	first, n, ok := strings.Cut(rest[slash+1:], "+")
	if !ok {
		return errors.New("not a run side by side")
	}
	if !s.system.AfterHooksTogether {
		return errors.New("the thread records no after_hooks_together: its after_tool hooks ran one at a time")
	}
	if rest[:slash] != p.Call {
		return fmt.Errorf("the run is after %s, not after %s", rest[:slash], p.Call)
	}
	i, err := strconv.Atoi(first)
	if err != nil || i < 0 || strconv.Itoa(i) != first {
		return fmt.Errorf("hook index %q", first)
	}
	if m, err := strconv.Atoi(n); err != nil || m < 1 || strconv.Itoa(m) != n {
		return fmt.Errorf("count %q", n)
	}
	if i > p.Hook {
		return fmt.Errorf("its first hook %d comes after hook %d: a run's facts are in declared order", i, p.Hook)
	}
	if p.Hook < 0 || p.Hook >= len(s.system.Hooks) {
		return fmt.Errorf("hook %d: the thread records %d", p.Hook, len(s.system.Hooks))
	}
	c, a := s.attemptOf(p.Call)
	if a == nil || c == nil {
		return fmt.Errorf("%s is no action of the thread", p.Call)
	}
	if !MatchHook(s.system.Hooks[p.Hook].Matcher, c.call.Name) {
		return fmt.Errorf("hook %d does not take %s", p.Hook, c.call.Name)
	}
	if len(a.Hooks) > 0 && a.Hooks[len(a.Hooks)-1].Hook > p.Hook {
		return fmt.Errorf("hook %d is recorded after hook %d: a run's facts are in declared order", p.Hook, a.Hooks[len(a.Hooks)-1].Hook)
	}
	ranAlready := slices.ContainsFunc(a.Hooks, func(r facts.HookRan) bool { return r.Hook == p.Hook })
	if due := s.dueAfter(c.call.Name, a.Hooks); !ranAlready && len(due) > 0 && due[0] != p.Hook {
		// (A hook that ran already is refused as such, elsewhere.)
		return fmt.Errorf("hook %d is recorded before hook %d, which is due first: a run's facts are in declared order", p.Hook, due[0])
	}
	return nil
}
