package harness

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// Plan mode. A thread plans while its latest plan.mode_set says so: its
// turns are offered no tool that writes (nor delegate, nor a tool whose
// commands cannot run read-only), its commands run in the sandbox with the
// workspace read-only (recorded so on each request), a call to another
// tool is refused before anyone is asked, and the model is asked for a
// plan. Its final answer is recorded as plan.recorded, and the thread
// waits for a person (WaitPlan): acting on the plan (a plan.mode_set that
// switches plan mode off, naming the plan, and a message) lets it go on
// with every tool; a message alone asks for another plan.

// planPrompt is what a thread in plan mode is told after its system
// prompt.
const planPrompt = "# Plan mode\n\n" +
	"You are in plan mode: look, do not change anything. Only tools that read are offered, " +
	"and commands run with the workspace read-only (a write fails). Investigate as much as you need, " +
	"then give your plan as your final answer: what you would change, where, and how you would check it. " +
	"A person reads it and decides whether you act on it."

// planning is the system part's fold of plan mode.
type planning struct {
	on bool
	// onSeq is the seq of the plan.mode_set that switched plan mode on:
	// only a turn after it was asked for a plan.
	onSeq   uint64
	userSeq uint64 // of the latest user.message
	// The latest model turn: its number, seq and text, and whether it is
	// a final answer (no calls, no question, not cut off).
	turn    int
	turnSeq uint64
	final   bool
	text    string
	planned int // the turn of the latest plan.recorded
	planSeq uint64
	err     error
}

func (p *planning) step(f facts.Fact) {
	switch f.Kind {
	case facts.KindPlanModeSet:
		m, err := facts.Decode[facts.PlanModeSet](f)
		if err != nil {
			p.err = fmt.Errorf("plan mode at seq %d: %w", f.Seq, err)
			return
		}
		if m.On && !p.on {
			p.onSeq = f.Seq
		}
		p.on = m.On
	case facts.KindUserMessage:
		p.userSeq = f.Seq
	case facts.KindModelTurn:
		mt, err := facts.Decode[facts.ModelTurn](f)
		if err != nil {
			p.err = fmt.Errorf("model turn at seq %d: %w", f.Seq, err)
			return
		}
		p.turn, p.turnSeq, p.text = mt.Turn, f.Seq, mt.Text
		p.final = len(mt.ToolCalls) == 0 && mt.Question == nil && mt.Cut == nil
	case facts.KindPlanRecorded:
		pr, err := facts.Decode[facts.PlanRecorded](f)
		if err != nil {
			p.err = fmt.Errorf("plan at seq %d: %w", f.Seq, err)
			return
		}
		p.planned, p.planSeq = pr.Turn, f.Seq
	}
}

// snapshot writes the fold of plan mode.
func (p *planning) snapshot(e *fold.Encoder) error {
	if p.err != nil {
		return p.err
	}
	e.Bool(p.on)
	e.Uint(p.onSeq)
	e.Uint(p.userSeq)
	e.Int(int64(p.turn))
	e.Uint(p.turnSeq)
	e.Bool(p.final)
	e.String(p.text)
	e.Int(int64(p.planned))
	e.Uint(p.planSeq)
	return nil
}

// restore reads what snapshot wrote.
func (p *planning) restore(d *fold.Decoder) {
	p.on, p.onSeq, p.userSeq = d.Bool(), d.Uint(), d.Uint()
	p.turn, p.turnSeq = int(d.Int()), d.Uint()
	p.final, p.text = d.Bool(), d.String()
	p.planned, p.planSeq = int(d.Int()), d.Uint()
}

// output adds what plan mode enables or waits for: the plan's record
// after a final answer, then a person's word on it.
func (p *planning) output(key string, out *fold.Output[Services]) {
	if !p.on || p.turn == 0 || p.turnSeq < p.userSeq || p.turnSeq < p.onSeq {
		// No turn answered in plan mode since the person last wrote.
		return
	}
	switch {
	case p.final && p.planned != p.turn:
		out.Transitions = append(out.Transitions, fold.Transition[Services]{
			Key:    key + "plan/record/" + strconv.Itoa(p.turn),
			Effect: planDraft(facts.PlanRecorded{Turn: p.turn, Text: p.text}),
		})
	case p.planned == p.turn && p.planSeq > p.userSeq:
		out.Waits = append(out.Waits, fold.Wait{Kind: fold.WaitPlan, RequestID: planRequest(p.turn),
			Summary: "act on this plan? " + firstLine(p.text)})
	}
}

// planRequest is the request id of the wait for a person's word on the
// plan of a model turn.
func planRequest(turn int) string { return "plan-" + strconv.Itoa(turn) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func planDraft(p facts.PlanRecorded) effect.Effect[Services, []facts.Draft] {
	d, err := facts.NewDraft(facts.KindPlanRecorded, "", p)
	if err != nil {
		return effect.Die[Services, []facts.Draft](err)
	}
	return effect.Succeed[Services]([]facts.Draft{d})
}

// accept checks a posted plan.mode_set: acting on a plan names the plan
// the thread waits on. Any other fact is not addressed to plan mode (the
// scheduler checks answers).
func (p *planning) accept(d facts.Draft) error {
	if d.Kind != facts.KindPlanModeSet {
		return fmt.Errorf("%w: %s", fold.ErrNotAddressed, d.Kind)
	}
	m, err := facts.Decode[facts.PlanModeSet](facts.Fact{Kind: d.Kind, Data: d.Data})
	if err != nil {
		return err
	}
	if m.Acts == 0 {
		return nil
	}
	if !p.on || p.planned != m.Acts || p.planSeq < p.userSeq {
		return fmt.Errorf("%w: no plan of turn %d waits for a person", ErrNoPlan, m.Acts)
	}
	return nil
}

// PlanView is what a thread records of plan mode: whether it plans, and
// the latest plan (0 and "" for none) and whether it waits for a person.
type PlanView struct {
	On      bool
	Turn    int
	Text    string
	Waiting bool
}

func (p *planning) view() PlanView {
	v := PlanView{On: p.on, Turn: p.planned}
	if p.planned != 0 && p.planned == p.turn {
		v.Text = p.text
		v.Waiting = p.on && p.planSeq > p.userSeq
	}
	return v
}

// planTools are the tools offered in plan mode: those that only read,
// and those whose commands can run with the workspace read-only.
func planTools(tb *Toolbox, offered []facts.ToolSchema) []facts.ToolSchema {
	var out []facts.ToolSchema
	for _, s := range offered {
		if planRefusal(tb, s.Name) == "" {
			out = append(out, s)
		}
	}
	return out
}

// planRefusal says why a tool is not offered in plan mode, "" for one
// that is. A tool the toolbox does not hold (ask_person) is offered.
func planRefusal(tb *Toolbox, name string) string {
	if name == delegateTool {
		return "plan mode: delegate is not offered while the thread plans (a child could write)"
	}
	t, ok := tb.Lookup(name)
	if !ok {
		return ""
	}
	if _, mcp := t.(mcpCaller); mcp && t.Capability() != action.Read {
		return fmt.Sprintf("plan mode: %s is not offered while the thread plans (an MCP server's tool that may change things)", name)
	}
	if sandboxOf(t) != nil {
		if readOnlySandbox(t) == nil {
			return fmt.Sprintf("plan mode: %s is not offered while the thread plans: its commands run unsandboxed, and cannot be made read-only", name)
		}
		return ""
	}
	if t.Capability() != action.Read {
		return fmt.Sprintf("plan mode: %s is not offered while the thread plans: it changes things; give your plan as your answer", name)
	}
	return ""
}

// readOnlier is a tool whose commands can run with the workspace
// read-only: it says where they then may reach (nil when they cannot).
type readOnlier interface{ ReadOnlySandbox() *facts.Sandbox }

func readOnlySandbox(t ToolAdapter) *facts.Sandbox {
	if r, ok := t.(readOnlier); ok {
		return r.ReadOnlySandbox()
	}
	return nil
}

// planEnv has the scheduler's environment say what plan mode changes of a
// call: refused before anyone is asked when its tool is not offered, run
// read-only when it runs commands.
func planEnv(a *assembly, k *kit, env *scheduler.Env[Services]) {
	precheck, sandboxFor, delegates := env.Precheck, env.Sandbox, env.Delegate
	// A read-only agent's child (Config.readOnly) is held to the same
	// rules all along, whatever its plan mode.
	readOnly := a.cfg.readOnly
	planning := func() bool { return readOnly || (k.system != nil && k.system.plan.on) }
	env.Precheck = func(call facts.ToolCall) effect.Effect[Services, string] {
		if planning() {
			if why := planRefusal(a.toolbox, call.Name); why != "" {
				return effect.Succeed[Services](why)
			}
		}
		return precheck(call)
	}
	env.Sandbox = func(call facts.ToolCall) *facts.Sandbox {
		if planning() {
			if t, ok := a.toolbox.Lookup(call.Name); ok && sandboxOf(t) != nil {
				return readOnlySandbox(t)
			}
		}
		return sandboxFor(call)
	}
	if delegates != nil {
		env.Delegate = func(call facts.ToolCall) bool {
			// A delegation while the thread plans is refused as a call
			// (see planRefusal), never spawned.
			return !planning() && delegates(call)
		}
	}
}

// sandbox is the sandbox system.configured records: where the actor's
// commands may reach — with the workspace read-only for a read-only
// agent's child (Config.readOnly), as each of its commands runs.
func (a *assembly) sandbox() *facts.Sandbox {
	if !a.cfg.readOnly || a.toolbox == nil {
		return a.toolbox.sandbox()
	}
	for _, t := range a.toolbox.tools {
		if sandboxOf(t) != nil {
			return readOnlySandbox(t)
		}
	}
	return nil
}
