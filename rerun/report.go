package rerun

import (
	"context"
	"fmt"
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/thread"
)

// The verdicts of a rerun (Report.Verdict).
const (
	// VerdictMatched: every turn matched the original's, and both ended
	// at the same turn.
	VerdictMatched = "matched"
	// VerdictDiverged: a turn differed (Report.DivergedAt).
	VerdictDiverged = "diverged"
	// VerdictUnfinished: the rerun has not ended (it waits, or failed)
	// and no turn differed so far.
	VerdictUnfinished = "unfinished"
)

// Report is a rerun beside its original: turn by turn, where and why
// they diverged, the checks, tokens and cost of each side, and the
// approvals the rerun would have needed.
type Report struct {
	Original  string   `json:"original"`
	Rerun     string   `json:"rerun"`
	Model     string   `json:"model,omitempty"`
	Key       string   `json:"key"`
	Overrides []string `json:"overrides,omitempty"`
	Live      bool     `json:"live,omitempty"`
	// Verdict is one of matched, diverged, unfinished.
	Verdict string `json:"verdict"`
	// DivergedAt is the turn the rerun diverged at (0 when it did not),
	// and Divergence where and why.
	DivergedAt int               `json:"diverged_at,omitempty"`
	Divergence *facts.Divergence `json:"divergence,omitempty"`
	// PromptChanged is set when the rerun's system prompt is not the
	// original's (an override, or the configuration changed since).
	PromptChanged bool `json:"prompt_changed,omitempty"`
	// ToolsChanged is set when the tools offered differ from the
	// original's (their names, descriptions or schemas).
	ToolsChanged bool `json:"tools_changed,omitempty"`
	// Served counts the calls served the original's results.
	Served int        `json:"served"`
	Turns  []TurnPair `json:"turns"`
	// OriginalSide and RerunSide total each thread's turns.
	OriginalSide Side `json:"original_side"`
	RerunSide    Side `json:"rerun_side"`
	// CostRatio is the rerun's cost over the original's, when both are
	// priced and the original's is not zero.
	CostRatio float64 `json:"cost_ratio,omitempty"`
	// Approvals are the calls of the rerun a person would have been asked
	// to approve, had they run.
	Approvals []Approval `json:"approvals,omitempty"`
	// Outcome and Reason are how the rerun's run ended, when Run ran it.
	Outcome harness.Status `json:"outcome,omitempty"`
	Reason  string         `json:"reason,omitempty"`
}

// Side totals one thread's model turns and checks.
type Side struct {
	Turns        int     `json:"turns"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	USD          float64 `json:"usd"`
	// Priced is set when every turn recorded a cost.
	Priced       bool `json:"priced"`
	ChecksPassed int  `json:"checks_passed"`
	ChecksFailed int  `json:"checks_failed"`
}

// TurnPair is turn N on each side.
type TurnPair struct {
	N        int       `json:"n"`
	Original *TurnSide `json:"original,omitempty"`
	Rerun    *TurnSide `json:"rerun,omitempty"`
	// Verdict is "served" (the calls matched and were served), "matched"
	// (a final answer where the original's was one), "diverged", or
	// "live" (after the divergence, run for real), or "unreached" (the
	// rerun has no such turn).
	Verdict  string            `json:"verdict"`
	Diverged *facts.Divergence `json:"diverged,omitempty"`
	// CostRatio is the rerun's cost of the turn over the original's, when
	// both are priced and the original's is not zero.
	CostRatio float64 `json:"cost_ratio,omitempty"`
}

// TurnSide is one side of a turn.
type TurnSide struct {
	Seq   uint64   `json:"seq"`
	Text  string   `json:"text,omitempty"`
	Calls []string `json:"calls,omitempty"`
	// Question is what the turn asked a person, when it asked.
	Question     string  `json:"question,omitempty"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	USD          float64 `json:"usd"`
	// Priced is set when the turn recorded a cost.
	Priced       bool `json:"priced"`
	ChecksPassed int  `json:"checks_passed"`
	ChecksFailed int  `json:"checks_failed"`
	// Offered are what came from outside after the turn, before the
	// next: on the original's side a person's answer or message, on the
	// rerun's the copies it was offered (see facts.RerunTurn.Offers).
	Offered []string `json:"offered,omitempty"`
}

// Approval is a call of the rerun that a person would have been asked to
// approve.
type Approval struct {
	Turn int    `json:"turn"`
	Tool string `json:"tool"`
	Args string `json:"args"`
	// Why: "served" (the original's person was asked: the rerun served
	// their answer's result), "asked" (the live rerun asked), "not run"
	// (the rerun stopped before it; the tool asks).
	Why string `json:"why"`
}

// Compare reads rerun id and its original from store and puts them side
// by side. asks, when set, says whether a tool's calls are put to a
// person (see Options.Asks).
func Compare(ctx context.Context, store thread.Store, id string, asks func(tool string) bool) (*Report, error) {
	mine, err := Read(ctx, store, id)
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", id, err)
	}
	if mine.Rerun == nil {
		return nil, fmt.Errorf("compare %s: %w", id, ErrNotRerun)
	}
	orig, err := Read(ctx, store, mine.From)
	if err != nil {
		return nil, fmt.Errorf("compare %s with %s: %w", id, mine.From, err)
	}
	r := &Report{Original: orig.Thread, Rerun: id, Model: mine.Rerun.Model, Key: mine.Rerun.Key,
		Overrides: mine.Rerun.Overrides, Live: mine.Rerun.Live, Turns: []TurnPair{}}
	if orig.System != nil && mine.System != nil {
		r.PromptChanged = orig.System.Prompt != mine.System.Prompt
		r.ToolsChanged = !sameTools(orig.System.Tools, mine.System.Tools)
	}
	r.OriginalSide = side(orig.Turns)
	r.RerunSide = side(mine.Turns)
	if r.OriginalSide.Priced && r.RerunSide.Priced && r.OriginalSide.USD > 0 {
		r.CostRatio = r.RerunSide.USD / r.OriginalSide.USD
	}
	n := 0
	for _, t := range orig.Turns {
		n = max(n, t.N)
	}
	for _, t := range mine.Turns {
		n = max(n, t.N)
	}
	after := false
	for i := 1; i <= n; i++ {
		p := TurnPair{N: i}
		if o := orig.turn(i); o != nil {
			p.Original = turnSide(o)
		}
		m := mine.turn(i)
		if m != nil {
			p.Rerun = turnSide(m)
		}
		switch {
		case m == nil:
			p.Verdict = "unreached"
		case after:
			p.Verdict = "live"
		case m.Compared == nil:
			p.Verdict = "live"
		case m.Compared.Diverged != nil:
			p.Verdict, p.Diverged = VerdictDiverged, m.Compared.Diverged
			r.DivergedAt, r.Divergence = i, m.Compared.Diverged
			after = true
		case len(m.Calls) > 0:
			p.Verdict = "served"
			r.Served += len(m.Calls)
		default:
			p.Verdict = VerdictMatched
		}
		if m != nil {
			r.Approvals = append(r.Approvals, approvals(m, p.Verdict, asks)...)
		}
		if o, m := p.Original, p.Rerun; o != nil && m != nil && o.Priced && m.Priced && o.USD > 0 {
			p.CostRatio = m.USD / o.USD
		}
		r.Turns = append(r.Turns, p)
	}
	switch {
	case r.DivergedAt > 0:
		r.Verdict = VerdictDiverged
	case ended(mine) && ended(orig) && len(mine.Turns) > 0 && len(orig.Turns) > 0 &&
		mine.Turns[len(mine.Turns)-1].N == orig.Turns[len(orig.Turns)-1].N:
		r.Verdict = VerdictMatched
	default:
		r.Verdict = VerdictUnfinished
	}
	return r, nil
}

// ended reports whether a recording's last turn is a final answer.
func ended(r *Recording) bool {
	if len(r.Turns) == 0 {
		return false
	}
	t := r.Turns[len(r.Turns)-1]
	return len(t.Calls) == 0 && t.Question == nil && t.Cut == nil
}

func side(turns []Turn) Side {
	s := Side{Turns: len(turns), Priced: len(turns) > 0}
	for _, t := range turns {
		s.InputTokens += t.Usage.InputTokens
		s.OutputTokens += t.Usage.OutputTokens
		if t.Cost != nil {
			s.USD += t.Cost.USD
		} else {
			s.Priced = false
		}
		p, f := checks(&t)
		s.ChecksPassed += p
		s.ChecksFailed += f
	}
	return s
}

func checks(t *Turn) (passed, failed int) {
	for _, c := range t.Calls {
		switch {
		case c.Check == nil:
		case c.Check.Verdict == facts.VerdictPass:
			passed++
		default:
			failed++
		}
	}
	return passed, failed
}

func turnSide(t *Turn) *TurnSide {
	s := &TurnSide{Seq: t.Seq, Text: clip(t.Text), InputTokens: t.Usage.InputTokens, OutputTokens: t.Usage.OutputTokens}
	if t.Cost != nil {
		s.USD, s.Priced = t.Cost.USD, true
	}
	s.Offered = slices.Clone(t.Said)
	if t.ModelTurn.Question != nil {
		s.Question = clip(t.ModelTurn.Question.Text)
	}
	for _, c := range t.Calls {
		s.Calls = append(s.Calls, c.Name+" "+clip(Canonical(c.Args)))
	}
	s.ChecksPassed, s.ChecksFailed = checks(t)
	return s
}

func approvals(m *Turn, verdict string, asks func(string) bool) []Approval {
	var out []Approval
	for _, c := range m.Calls {
		a := Approval{Turn: m.N, Tool: c.Name, Args: clip(Canonical(c.Args))}
		switch {
		case c.Requested != nil && c.Requested.Served != nil:
			if !c.Requested.Served.Asked {
				continue
			}
			a.Why = "served"
		case c.Asked || (c.Requested != nil && c.Requested.Confirm):
			a.Why = "asked"
		case c.Requested == nil && verdict == VerdictDiverged && asks != nil && asks(c.Name):
			a.Why = "not run"
		default:
			continue
		}
		out = append(out, a)
	}
	return out
}

// sameTools reports whether two offers of tools are the same.
func sameTools(a, b []facts.ToolSchema) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || Canonical(string(a[i].Schema)) != Canonical(string(b[i].Schema)) {
			return false
		}
	}
	return true
}
