package drive

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// SetPlanMode records that the thread plans (on) or no longer does from
// now on (plan.mode_set, by who switched it). Switching it to what it is
// already appends nothing. The key of the post derives from the thread's
// head, so a command run again on an unchanged thread appends it once.
func SetPlanMode(ctx context.Context, th *harness.Thread, on bool, by string) (harness.Posted, error) {
	v, err := th.View(ctx)
	if err != nil {
		return harness.Posted{}, err
	}
	if p := v.Plan; (p == nil && !on) || (p != nil && p.On == on) {
		return harness.Posted{Seq: v.Head.Seq, Duplicate: true}, nil
	}
	return postPlan(ctx, th, v.Head.Seq, facts.PlanModeSet{On: on, By: by})
}

// ActOnPlan answers the plan the thread waits on (plan mode): plan mode
// is switched off, naming the plan, and the thread is told to carry it
// out — a message, so that its next model turn follows — both in one
// append. A thread that waits on no plan is ErrNoPlan.
func ActOnPlan(ctx context.Context, th *harness.Thread, by string) (harness.Posted, error) {
	return actOnPlan(ctx, th, 0, by)
}

// AnswerPlan gives a person's reply to the plan the thread waits on, the
// one request (planRequest "plan-N", as State.Waits names it) — the plan
// the person was shown: a plan made since (another turn's) is not
// answered, ErrNoPlan. r.Approved acts on it (see ActOnPlan); r.Text asks
// for another plan instead, as a message (plan mode stays on). The page,
// the API and the MCP server answer a plan through it (AnswerPending).
func AnswerPlan(ctx context.Context, th *harness.Thread, request string, r Reply) (harness.Posted, error) {
	if r.Kind != fold.WaitPlan {
		return harness.Posted{}, fmt.Errorf("%w: a %s reply to the plan %s", ErrBadReply, r.Kind, request)
	}
	if err := r.Check(); err != nil {
		return harness.Posted{}, err
	}
	n, ok := strings.CutPrefix(request, "plan-")
	turn, err := strconv.Atoi(n)
	if !ok || err != nil || turn < 1 {
		return harness.Posted{}, fmt.Errorf("%w: %q names no plan (want plan-N)", ErrBadReply, request)
	}
	if r.Approved {
		return actOnPlan(ctx, th, turn, r.By)
	}
	if _, err := waitingPlan(ctx, th, turn); err != nil {
		return harness.Posted{}, err
	}
	msg, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{Text: r.Text})
	if err != nil {
		return harness.Posted{}, fmt.Errorf("%w: %w", ErrBadReply, err)
	}
	return th.Post(ctx, msg, "plan-revise-"+strconv.Itoa(turn))
}

// waitingPlan is the thread's view when it waits on a plan — that of
// turn, when turn is not 0 — else an error wrapping ErrNoPlan.
func waitingPlan(ctx context.Context, th *harness.Thread, turn int) (harness.View, error) {
	v, err := th.View(ctx)
	if err != nil {
		return v, err
	}
	p := v.Plan
	switch {
	case p == nil || !p.Waiting:
		return v, fmt.Errorf("thread %s: %w: it waits on no plan (harness plan %s on, then run it, makes one)", th.ID(), harness.ErrNoPlan, th.ID())
	case turn != 0 && p.Turn != turn:
		return v, fmt.Errorf("thread %s: %w: the plan of turn %d no longer waits (the plan of turn %d does: read it first)", th.ID(), harness.ErrNoPlan, turn, p.Turn)
	}
	return v, nil
}

// actOnPlan acts on the plan the thread waits on (that of turn, when turn
// is not 0).
func actOnPlan(ctx context.Context, th *harness.Thread, turn int, by string) (harness.Posted, error) {
	v, err := waitingPlan(ctx, th, turn)
	if err != nil {
		return harness.Posted{}, err
	}
	p := v.Plan
	d, err := facts.NewDraft(facts.KindPlanModeSet, "", facts.PlanModeSet{By: by, Acts: p.Turn})
	if err != nil {
		return harness.Posted{}, fmt.Errorf("plan mode of %s: %w", th.ID(), err)
	}
	msg, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{
		Text: fmt.Sprintf("Your plan (turn %d) is approved: carry it out. Every tool is offered again.", p.Turn),
	})
	if err != nil {
		return harness.Posted{}, err
	}
	// Both in one append: a crash leaves plan mode on and the plan
	// waiting, or both facts — never plan mode off with nobody telling
	// the model to act. The keys are those of the two appends before.
	key := "plan-act-" + strconv.Itoa(p.Turn)
	return th.Post(ctx, d, key, harness.Ingress{Draft: msg, Key: key + "-message"})
}

// PlanOn is plan mode switched on when a thread starts, by who started
// it: to append with its first message (harness.Thread.Start).
func PlanOn(by string) (harness.Ingress, error) {
	d, err := facts.NewDraft(facts.KindPlanModeSet, "", facts.PlanModeSet{On: true, By: by})
	return harness.Ingress{Draft: d, Key: "plan-start"}, err
}

func postPlan(ctx context.Context, th *harness.Thread, head uint64, p facts.PlanModeSet) (harness.Posted, error) {
	d, err := facts.NewDraft(facts.KindPlanModeSet, "", p)
	if err != nil {
		return harness.Posted{}, fmt.Errorf("plan mode of %s: %w", th.ID(), err)
	}
	return th.Post(ctx, d, "plan-"+strconv.FormatUint(head, 10))
}
