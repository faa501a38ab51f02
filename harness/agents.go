package harness

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Agent is an agent file as the runtime read it (see AgentReader): what a
// delegation that names it gives its child — instructions, and bounds on
// its tools and budget that narrow what the parent would give.
type Agent struct {
	// Name is the file's name without ".md".
	Name string
	// Scope is "project" or "user"; Path is where the file was read.
	Scope, Path string
	// Digest is the digest of the file's bytes (facts.ContentDigest).
	Digest string
	// Description says what the agent is for.
	Description string
	// Tools, when not nil, are the tools a child of this agent may have
	// at most: those of them its parent has.
	Tools []string
	// MaxTurns, when > 0, bounds the child's model turns.
	MaxTurns int
	// Instructions are the file's body: given to the child's model after
	// the system prompt.
	Instructions string
	// Sandbox is facts.SandboxReadOnly for an agent that only reads: its
	// child is offered only the tools plan mode offers (those that read,
	// and commands run with the workspace read-only) and cannot delegate;
	// "" is its parent's.
	Sandbox string
	// Model, when set, is the model spec the child runs on (as
	// recorded: see stock.ParseModelSpec) instead of its parent's.
	Model string
	// ModelTrusted reports whether the file may choose Model: the
	// user's own file, or a workspace file whose content the person
	// trusted. A model another file names is a widening (another
	// provider, its credentials, its prices): a delegation to such an
	// agent is refused unless the model is its parent's.
	ModelTrusted bool
}

// modelOf is the model a thread's turns run on: its agent file's (see
// Config.agentModel), loaded through svc.Models, else svc.Model.
func modelOf(cfg Config, svc Services) (model.Model, error) {
	if cfg.agentModel == "" {
		if svc.Model == nil {
			return nil, effect.Defect(errors.New("no model service"))
		}
		return svc.Model, nil
	}
	if svc.Models == nil {
		return nil, &model.Error{Class: facts.ClassPermission, Err: fmt.Errorf("agent model %s: %w", cfg.agentModel, ErrNoAgentModels)}
	}
	m, err := svc.Models(cfg.agentModel)
	if err != nil {
		return nil, &model.Error{Class: facts.ClassPermission, Err: fmt.Errorf("agent model %s: %w", cfg.agentModel, err)}
	}
	return m, nil
}

// AgentReader reads agent files for the runtime when a delegation names
// one. It reads as the runtime, not through a sandboxed tool; what it
// read is recorded on child.spawned, and a replay reads that record.
type AgentReader interface {
	// ReadAgent reads the agent of that name; one that is not there is
	// ErrUnknownAgent.
	ReadAgent(ctx context.Context, name string) (Agent, error)
	// AgentNames are the names of the agents there are, sorted.
	AgentNames(ctx context.Context) ([]string, error)
}
