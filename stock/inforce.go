package stock

import (
	"context"

	"github.com/seed-7cc7a084/harness/facts"
)

// InForce is what applies in a place, as a person reviews it (harness
// config): the settings with their sources, the instruction files read,
// the agents defined in files, the user's own instruction file, and the
// project rules kept for another directory at this path.
type InForce struct {
	Layered      Layered
	Instructions []facts.InstructionFile
	Agents       []AgentEntry
	// UserInstructions is the user's own instruction file's path ("" when
	// there is none to name).
	UserInstructions string
	// RulesElsewhere counts the project rules kept for this workspace's
	// path that were given for another directory there (removed and made
	// again, or another clone), kept in RulesFile: they do not apply.
	RulesElsewhere int
	RulesFile      string
}

// InForce reads what applies in the place p. A settings file that cannot
// be read is said in its source and returned as loadErr, and the rest is
// read still; err is an error reading the instructions or the agents.
func (p Place) InForce(ctx context.Context, getenv func(string) string) (in InForce, loadErr, err error) {
	l, loadErr := p.LoadLayered(getenv)
	read, err := InstructionsOf(p, l.Settings, getenv).ReadInstructions(ctx, nil)
	if err != nil {
		return in, loadErr, err
	}
	agents, _, err := ListAgents(ctx, p, l.Settings, getenv)
	if err != nil {
		return in, loadErr, err
	}
	in = InForce{Layered: l, Agents: agents, UserInstructions: UserInstructionsFile(getenv)}
	in.Instructions = make([]facts.InstructionFile, len(read))
	for i, r := range read {
		in.Instructions[i] = r.File
	}
	if gone, file := p.ProjectRulesElsewhere(getenv); len(gone) > 0 {
		in.RulesElsewhere, in.RulesFile = len(gone), file
	}
	return in, loadErr, nil
}
