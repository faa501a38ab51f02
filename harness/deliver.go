package harness

import (
	"context"
	"fmt"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
)

// resumer is a tool whose call can go on after the process that made it
// died: the answer to a question its server asked during the call is
// delivered over the resumable session the question names, and the
// call's result is read there (an MCP tool of a streamable HTTP server).
// The report says why, in doubt, when that cannot be done.
type resumer interface {
	Resume(ctx context.Context, req action.Request, asked facts.QuestionAsked, answer facts.QuestionAnswered) facts.Report
}

// resumed is the adapter of a delivery: Execute resumes the call instead
// of making it.
type resumed struct {
	name   string
	tool   resumer // nil: this process has no such tool
	asked  facts.QuestionAsked
	answer facts.QuestionAnswered
}

func (r resumed) Name() string { return r.name }

func (r resumed) Execute(ctx context.Context, req action.Request) (facts.Report, error) {
	if r.tool == nil {
		return facts.Report{Status: facts.StatusFailed, InDoubt: true, Error: fmt.Sprintf(
			"%s: the answer to %s was not delivered: this process cannot resume the call (the tool is not offered here: is the server %q configured and reachable?); whether the call took effect is unknown",
			r.name, r.asked.RequestID, r.asked.Elicit.Server)}, nil
	}
	return r.tool.Resume(ctx, req, r.asked, r.answer), nil
}

// deliver describes delivering answer, the answer to the question asked
// during the call req that started in a process that died, and completing
// the action with the call's result: through the boundary, as the call
// itself would have ended (its check, its effect state); the observation
// before is the dead process's, so nothing is compared.
func deliver(cfg Config, req action.Request, started facts.ActionStarted, asked facts.QuestionAsked, answer facts.QuestionAnswered) effect.Effect[Services, []facts.Draft] {
	return effect.FromAsync(func(ctx context.Context, svc Services) ([]facts.Draft, error) {
		b := svc.boundary(cfg)
		ad := resumed{name: req.Adapter, asked: asked, answer: answer}
		if t, ok := svc.Tools.Lookup(req.Adapter); ok {
			if unobservable(t) {
				b.Observer = nil
			}
			if r, ok := t.(resumer); ok {
				ad.tool = r
			}
		}
		return endDrafts(b.Finish(ctx, req, action.Begun{Started: started}, ad))
	})
}
