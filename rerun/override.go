package rerun

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// delegateTool is the name of the tool harness's Delegate part offers
// (not in a toolbox: the part adds it).
const delegateTool = "delegate"

// overrides are the rerun's overrides as recorded and keyed: Overrides,
// then the instructions' digest, then the tools kept and left out (each
// list sorted, once each), so that two reruns that change the same are
// one key, and two that change different things are two.
func (o Options) overrides() []string {
	out := slices.Clone(o.Overrides)
	if o.Instructions != nil {
		sum := sha256.Sum256(o.Instructions)
		out = append(out, "instructions=sha256:"+hex.EncodeToString(sum[:]))
	}
	if o.Tools != nil {
		out = append(out, "tools="+strings.Join(sortedOnce(o.Tools), ","))
	}
	if len(o.WithoutTools) > 0 {
		out = append(out, "without_tools="+strings.Join(sortedOnce(o.WithoutTools), ","))
	}
	return out
}

func sortedOnce(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return slices.Compact(out)
}

// SystemPromptOverride is the override that names a system prompt
// offered in place of the original's (Options.Overrides): its SHA-256
// digest, so that the key tells two prompts apart without recording them.
func SystemPromptOverride(prompt []byte) string {
	sum := sha256.Sum256(prompt)
	return "system_prompt=sha256:" + hex.EncodeToString(sum[:])
}

// KeyOf is the key of the rerun o describes (Key of its model spec, all
// its overrides and whether it goes on live).
func KeyOf(o Options) string { return Key(o.Model, o.overrides(), o.Live) }

// narrow returns the services' toolbox and the actor with only the tools
// the overrides keep, and whether they narrowed at all. Only a tool the
// original was offered may be named, and the rerun is offered no tool
// the original was not: an override narrows, never widens.
func (o Options) narrow(orig *Recording, svc harness.Services) (*harness.Toolbox, harness.Actor, bool, error) {
	if o.Tools == nil && len(o.WithoutTools) == 0 {
		return svc.Tools, o.Actor, false, nil
	}
	if orig.System == nil {
		return nil, harness.Actor{}, false, fmt.Errorf("%w: %s records no tools offered to narrow", ErrOverride, orig.Thread)
	}
	var offered []string
	for _, s := range orig.System.Tools {
		offered = append(offered, s.Name)
	}
	for _, name := range append(slices.Clone(o.Tools), o.WithoutTools...) {
		if !slices.Contains(offered, name) {
			return nil, harness.Actor{}, false, fmt.Errorf("%w: %q was not offered to %s (it was offered %s)", ErrOverride, name, orig.Thread, strings.Join(offered, ", "))
		}
	}
	keep := offered
	if o.Tools != nil {
		keep = o.Tools
	}
	keep = slices.DeleteFunc(slices.Clone(keep), func(n string) bool { return slices.Contains(o.WithoutTools, n) })
	var tools []harness.ToolAdapter
	for _, s := range svc.Tools.Schemas() {
		if !slices.Contains(keep, s.Name) {
			continue
		}
		t, _ := svc.Tools.Lookup(s.Name)
		tools = append(tools, t)
	}
	for _, name := range keep {
		if _, ok := svc.Tools.Lookup(name); !ok && name != delegateTool {
			return nil, harness.Actor{}, false, fmt.Errorf("%w: %q is kept, but this harness has no such tool to offer", ErrOverride, name)
		}
	}
	tb, err := harness.NewToolbox(tools...)
	if err != nil {
		return nil, harness.Actor{}, false, fmt.Errorf("%w: %w", ErrOverride, err)
	}
	compose := harness.CodingActor
	if slices.Contains(keep, delegateTool) {
		compose = harness.DelegatingActor
	}
	actor, err := compose(o.Runtime.Config, tb)
	if err != nil {
		return nil, harness.Actor{}, false, fmt.Errorf("%w: %w", ErrOverride, err)
	}
	return tb, actor, true, nil
}

// instructionsOverride gives the model the override's text in place of
// the instruction files (AGENTS.md): one file, named as the override.
type instructionsOverride []byte

// OverridePath is the name an instructions override is given to the
// model, and recorded, under (instructions.read).
const OverridePath = "(instructions override)"

// ReadInstructions returns the override, whatever directories are asked;
// none when it is empty.
func (in instructionsOverride) ReadInstructions(context.Context, []string) ([]harness.Instruction, error) {
	if len(in) == 0 {
		return nil, nil
	}
	return []harness.Instruction{{File: facts.InstructionFile{Scope: facts.InstructionsProject, Path: OverridePath}, Text: in}}, nil
}
