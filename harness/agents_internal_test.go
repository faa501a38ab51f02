package harness

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// TestDecideSpawnAgent checks that a child of an agent has the
// intersection of its parent's and the agent's authority.
func TestDecideSpawnAgent(t *testing.T) {
	sys := facts.SystemConfigured{Tools: []facts.ToolSchema{{Name: "read_file"}, {Name: "write_file"}, {Name: delegateTool}}}
	req := func(args string) scheduler.SpawnRequest {
		return scheduler.SpawnRequest{Thread: "t1", Ref: "1-d", Call: facts.ToolCall{Name: delegateTool, Args: args}, System: sys}
	}
	ag := &Agent{Name: "rev", Scope: "project", Path: ".harness/agents/rev.md", Digest: "d", Tools: []string{"read_file", "run_command"}, MaxTurns: 10, Instructions: "Review."}

	// The agent's tools the parent has (run_command it lacks: not given);
	// the agent's turns, cut to what the parent has left.
	p := decideSpawn(Config{MaxTurns: 5}, BudgetView{Turns: 2}, req(`{"task":"x","agent":"rev"}`), ag, nil)
	require.Empty(t, p.Refused)
	require.Equal(t, []string{"read_file"}, p.Tools)
	require.Equal(t, 3, p.MaxTurns)
	require.Equal(t, &facts.AgentFile{Name: "rev", Scope: "project", Path: ".harness/agents/rev.md", Digest: "d", Instructions: "Review."}, p.Agent)

	// Asking for fewer turns than the agent's gives fewer.
	p = decideSpawn(Config{}, BudgetView{}, req(`{"task":"x","agent":"rev","max_turns":4}`), ag, nil)
	require.Equal(t, 4, p.MaxTurns)
	p = decideSpawn(Config{}, BudgetView{}, req(`{"task":"x","agent":"rev","max_turns":40}`), ag, nil)
	require.Equal(t, 10, p.MaxTurns)

	// A tool of the parent's outside the agent's: refused.
	p = decideSpawn(Config{}, BudgetView{}, req(`{"task":"x","agent":"rev","tools":["write_file"]}`), ag, nil)
	require.Contains(t, p.Refused, `tool "write_file" is not one of agent rev's tools`)
	require.Nil(t, p.Agent)

	// A name that is no agent's name, or an agent not read: refused.
	p = decideSpawn(Config{}, BudgetView{}, req(`{"task":"x","agent":"../rev"}`), nil, nil)
	require.Contains(t, p.Refused, "a name is 1 to 64 of")
	p = decideSpawn(Config{}, BudgetView{}, req(`{"task":"x","agent":"other"}`), ag, nil)
	require.Contains(t, p.Refused, `agent "other" was not read`)

	// An agent that names no tools leaves the parent's.
	p = decideSpawn(Config{}, BudgetView{}, req(`{"task":"x","agent":"rev"}`), &Agent{Name: "rev", Digest: "d"}, nil)
	require.Equal(t, []string{"read_file", "write_file"}, p.Tools)
}

// TestDecideSpawnAgentModel checks that a child runs on its agent's model
// only when the file may choose it: a model other than the parent's from
// an untrusted file is refused; the parent's own needs no trust and is not
// recorded.
func TestDecideSpawnAgentModel(t *testing.T) {
	sys := facts.SystemConfigured{Model: "openai:parent", Tools: []facts.ToolSchema{{Name: "read_file"}, {Name: delegateTool}}}
	req := scheduler.SpawnRequest{Thread: "t1", Ref: "1-d", Call: facts.ToolCall{Name: delegateTool, Args: `{"task":"x","agent":"m"}`}, System: sys}
	ag := &Agent{Name: "m", Scope: "project", Path: ".harness/agents/m.md", Digest: "d", Model: "anthropic:other"}

	p := decideSpawn(Config{}, BudgetView{}, req, ag, nil)
	require.Contains(t, p.Refused, "agent m names model anthropic:other, and a workspace file may choose a model other than its parent's (openai:parent) only once the person trusts its content: harness trust .harness/agents/m.md")
	require.Nil(t, p.Agent)

	ag.ModelTrusted = true
	p = decideSpawn(Config{}, BudgetView{}, req, ag, nil)
	require.Empty(t, p.Refused)
	require.Equal(t, "anthropic:other", p.Agent.Model)

	ag.Model, ag.ModelTrusted = "openai:parent", false
	p = decideSpawn(Config{}, BudgetView{}, req, ag, nil)
	require.Empty(t, p.Refused, "the parent's own model narrows nothing")
	require.Empty(t, p.Agent.Model, "and runs as the parent's")
}
