package harness

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

// Services are what a coding actor's transitions need. They travel in the
// effects' service type and are swapped at the edge (effect.Provide): the
// real model in production, a scripted one in a test.
type Services struct {
	Model model.Model
	Tools ToolRunner
	// Summarize writes the summary a compaction records; nil uses
	// Extract, which calls nothing.
	Summarize func(ctx context.Context, messages []facts.Message) (string, error)
	// Tracing receives the spans of transitions; nil is the global
	// OpenTelemetry provider.
	Tracing trace.TracerProvider
}

// TracerProvider makes Services an effect.Traced.
func (s Services) TracerProvider() trace.TracerProvider {
	if s.Tracing != nil {
		return s.Tracing
	}
	return otel.GetTracerProvider()
}

// ToolRunner runs tool calls.
type ToolRunner interface {
	RunTool(ctx context.Context, call facts.ToolCall) (facts.Report, error)
}

// Confirmation is when a tool asks a person before it runs.
type Confirmation string

// The confirmation policies.
const (
	// ConfirmAlways asks before every call.
	ConfirmAlways Confirmation = "always"
	// ConfirmNever never asks.
	ConfirmNever Confirmation = "never"
	// ConfirmEffectful asks when the tool writes or executes.
	ConfirmEffectful Confirmation = "when-effectful"
)

// The capabilities a tool can need.
const (
	CapRead    = "read"
	CapWrite   = "write"
	CapExecute = "execute"
)

// Tool is one tool a coding actor can call.
type Tool struct {
	Schema facts.ToolSchema
	// Capability is CapRead, CapWrite or CapExecute.
	Capability string
	// Confirm is when a person must approve a call; "" is
	// ConfirmEffectful.
	Confirm Confirmation
	// Run runs a call with the arguments exactly as the model wrote them.
	Run func(ctx context.Context, args string) (facts.Report, error)
}

// needsConfirmation applies the tool's policy.
func (t Tool) needsConfirmation() bool {
	switch t.Confirm {
	case ConfirmAlways:
		return true
	case ConfirmNever:
		return false
	}
	return t.Capability != CapRead
}

// Toolbox is a set of tools, in the order they are offered to the model.
// It is both what the Tools part declares and a ToolRunner.
type Toolbox struct {
	tools []Tool
}

// NewToolbox returns a toolbox; names must be unique and capabilities known.
func NewToolbox(tools ...Tool) (*Toolbox, error) {
	seen := map[string]bool{}
	for i, t := range tools {
		switch {
		case t.Schema.Name == "":
			return nil, fmt.Errorf("toolbox: tool %d has no name", i+1)
		case seen[t.Schema.Name]:
			return nil, fmt.Errorf("toolbox: two tools named %q", t.Schema.Name)
		case t.Capability != CapRead && t.Capability != CapWrite && t.Capability != CapExecute:
			return nil, fmt.Errorf("toolbox: tool %q: capability %q, want read, write or execute", t.Schema.Name, t.Capability)
		case t.Run == nil:
			return nil, fmt.Errorf("toolbox: tool %q has no Run", t.Schema.Name)
		}
		seen[t.Schema.Name] = true
	}
	return &Toolbox{tools: slices.Clone(tools)}, nil
}

// Lookup returns the tool named name.
func (b *Toolbox) Lookup(name string) (Tool, bool) {
	if b == nil {
		return Tool{}, false
	}
	for _, t := range b.tools {
		if t.Schema.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Schemas returns the schemas of the tools, in order.
func (b *Toolbox) Schemas() []facts.ToolSchema {
	if b == nil {
		return nil
	}
	out := make([]facts.ToolSchema, len(b.tools))
	for i, t := range b.tools {
		out[i] = t.Schema
	}
	return out
}

// RunTool runs the named tool. An unknown tool is a failed report, which
// the model is shown, not an error of the runtime.
func (b *Toolbox) RunTool(ctx context.Context, call facts.ToolCall) (facts.Report, error) {
	t, ok := b.Lookup(call.Name)
	if !ok {
		return facts.Report{Status: facts.StatusFailed, Error: fmt.Sprintf("no tool named %q", call.Name)}, nil
	}
	return t.Run(ctx, call.Args)
}
