package harnesstest

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
)

// LoopActor is the coding actor the logs of Parked are written by: the
// default configuration with write_file, read_file and run_command,
// whose runs fail (a log of it is read, never resumed).
func LoopActor(tb T) harness.Actor {
	tb.Helper()
	tool := func(name string, needs action.Capability) harness.ToolAdapter {
		return harness.Tool{Spec: facts.ToolSchema{Name: name}, Needs: needs,
			Run: func(context.Context, json.RawMessage) (facts.Report, error) {
				return facts.Report{}, errors.New("a replayed log ran a tool")
			}}
	}
	tools, err := harness.NewToolbox(tool("write_file", action.Write), tool("read_file", action.Read), tool("run_command", action.Execute))
	require.NoError(tb, err)
	cfg, err := harness.NewConfig()
	require.NoError(tb, err)
	a, err := harness.CodingActor(cfg, tools)
	require.NoError(tb, err)
	return a
}
