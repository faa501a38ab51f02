package drive

import (
	"context"
	"fmt"
	"strconv"

	"github.com/seed-7cc7a084/harness/facts"
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
// out — a message, so that its next model turn follows. A thread that
// waits on no plan is ErrNoPlan.
func ActOnPlan(ctx context.Context, th *harness.Thread, by string) (harness.Posted, error) {
	v, err := th.View(ctx)
	if err != nil {
		return harness.Posted{}, err
	}
	p := v.Plan
	if p == nil || !p.Waiting {
		return harness.Posted{}, fmt.Errorf("thread %s: %w: it waits on no plan (harness plan %s on, then run it, makes one)", th.ID(), harness.ErrNoPlan, th.ID())
	}
	if _, err := postPlan(ctx, th, v.Head.Seq, facts.PlanModeSet{By: by, Acts: p.Turn}); err != nil {
		return harness.Posted{}, err
	}
	msg, err := facts.NewDraft(facts.KindUserMessage, "", facts.UserMessage{
		Text: fmt.Sprintf("Your plan (turn %d) is approved: carry it out. Every tool is offered again.", p.Turn),
	})
	if err != nil {
		return harness.Posted{}, err
	}
	return th.Post(ctx, msg, "plan-act-"+strconv.Itoa(p.Turn)+"-message")
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
	key := "plan-" + strconv.FormatUint(head, 10)
	if p.Acts > 0 {
		key = "plan-act-" + strconv.Itoa(p.Acts)
	}
	return th.Post(ctx, d, key)
}
