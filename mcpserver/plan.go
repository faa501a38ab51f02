package mcpserver

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/drive"
)

// PlanArgs are the plan tool's: switch a thread's plan mode, as the page
// and the API do (POST /api/threads/ID/plan).
type PlanArgs struct {
	Thread string      `json:"thread" jsonschema:"the thread's id"`
	On     drive.YesNo `json:"on" jsonschema:"true: the thread plans from its next model turn (no tool that writes is offered, commands run read-only, its answer is a plan a person acts on); false: it no longer does"`
	By     string      `json:"by,omitempty" jsonschema:"who switches it (recorded; default: the MCP client's name)"`
	Resume drive.YesNo `json:"resume,omitempty" jsonschema:"run the thread on after the switch (default false: it takes effect at the thread's next model turn)"`
}

// planSchema is the plan tool's input schema, its yes-or-no arguments
// JSON booleans (see answerSchema), on required.
// It is made at first use, not at start-up.
var planSchema = sync.OnceValue(func() *jsonschema.Schema {
	sc, err := jsonschema.For[PlanArgs](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[drive.YesNo](): {Types: []string{"null", "boolean"}},
	}})
	if err != nil {
		panic(err) // PlanArgs is a plain struct
	}
	return sc
})

// addPlan adds the plan tool to srv.
func (s *server) addPlan(srv *sdk.Server) {
	yes, no := true, false
	sdk.AddTool(srv, &sdk.Tool{Name: "plan", InputSchema: planSchema(),
		Description: "Switch a thread's plan mode on (it plans from its next model turn: no tool that writes, commands read-only, its final answer a plan that waits for a person) or off (only from a client whose answers are a person's: plan mode off lets the thread write). Recorded with who switched it; switching it to what it is appends nothing. Acting on a plan the thread waits on is the answer tool's.",
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no}}, s.plan)
}

// plan switches the thread's plan mode (drive.SetPlanMode, as the page and
// the API do), recorded as by whom. Switching it on narrows what the
// thread may do: any client may. Switching it off widens it — the thread
// writes again — so it is a person's word, as acting on a plan is: only
// from a client whose answers are a person's (ClientApproves).
func (s *server) plan(ctx context.Context, req *sdk.CallToolRequest, a PlanArgs) (*sdk.CallToolResult, any, error) {
	if !a.On.Said() {
		return nil, nil, fmt.Errorf("say whether plan mode is on (on: true or false)")
	}
	on := a.On == drive.Yes
	if !on && !s.opts.ClientApproves {
		return nil, nil, fmt.Errorf("%w: this server was not told that its client's answers are a person's, so it cannot switch plan mode off for thread %s (the thread would write again); a person switches it off at harness's own page or commands", ErrPersonOnly, a.Thread)
	}
	resume := a.Resume.Or(false)
	o, th, err := s.thread(ctx, a.Thread, resume, session(req))
	if err != nil {
		return nil, nil, err
	}
	defer o.Close()
	p, err := drive.SetPlanMode(ctx, th, on, s.by(req, a.By))
	if err != nil {
		return nil, nil, err
	}
	var v ThreadView
	if resume {
		v, err = s.drive(ctx, o, th, session(req))
	} else {
		var st drive.State
		st, err = drive.Inspect(ctx, th)
		v = viewOf(o, st)
	}
	if err != nil {
		return nil, nil, err
	}
	v.Posted = drive.YesNoOf(!p.Duplicate)
	return nil, v, nil
}
