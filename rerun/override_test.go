package rerun_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
	"github.com/seed-7cc7a084/harness/rerun"
)

func toolNames(ts []facts.ToolSchema) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// forkOf is the rerun's thread.forked.
func forkOf(t *testing.T, e *harnesstest.Stock, id string) facts.ThreadForked {
	t.Helper()
	for _, f := range logOf(t, e, id) {
		if f.Kind == facts.KindThreadForked {
			p, err := facts.Decode[facts.ThreadForked](f)
			require.NoError(t, err)
			return p
		}
	}
	t.Fatalf("%s has no thread.forked", id)
	return facts.ThreadForked{}
}

// An instructions override replaces the AGENTS.md the model is given,
// is recorded (thread.forked, instructions.read) and keys the rerun apart.
func TestRerunWithOtherInstructions(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.NoError(t, os.WriteFile(filepath.Join(e.Root, "AGENTS.md"), []byte("Indent with tabs.\n"), 0o644))
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)

	rt, actor, cm, ran := rerunOn(t, e, scriptA)
	reqs := &requests{Model: cm}
	rt.Services.Model = reqs
	plain := rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor}
	over := plain
	over.Instructions = []byte("Indent with spaces.\n")
	rep, err := rerun.Run(ctx, over)
	require.NoError(t, err)
	require.Equal(t, rerun.VerdictMatched, rep.Verdict)
	require.Equal(t, int64(0), ran.Load())
	require.NotEmpty(t, reqs.seen)
	for _, r := range reqs.seen {
		require.Contains(t, r.System, "Indent with spaces.")
		require.NotContains(t, r.System, "Indent with tabs.")
	}
	require.Len(t, rep.Overrides, 1)
	require.Regexp(t, `^instructions=sha256:[0-9a-f]{64}$`, rep.Overrides[0])
	require.Equal(t, rep.Overrides, forkOf(t, e, rep.Rerun).Rerun.Overrides)
	var read *facts.InstructionsRead
	for _, f := range logOf(t, e, rep.Rerun) {
		if f.Kind == facts.KindInstructionsRead {
			p, err := facts.Decode[facts.InstructionsRead](f)
			require.NoError(t, err)
			read = &p
		}
	}
	require.NotNil(t, read)
	require.Len(t, read.Files, 1)
	require.Equal(t, rerun.OverridePath, read.Files[0].Path)
	require.Equal(t, facts.ContentDigest([]byte("Indent with spaces.\n")), read.Files[0].Digest)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))

	// Without the override: another key, another thread, and the
	// original's instructions as its turns were given them — not the
	// file as it is now.
	require.NoError(t, os.WriteFile(filepath.Join(e.Root, "AGENTS.md"), []byte("Indent with nothing.\n"), 0o644))
	require.NotEqual(t, rerun.KeyOf(plain), rerun.KeyOf(over))
	reqs.seen = nil
	rep2, err := rerun.Run(ctx, plain)
	require.NoError(t, err)
	require.NotEqual(t, rep.Rerun, rep2.Rerun)
	require.Equal(t, rerun.VerdictMatched, rep2.Verdict)
	for _, r := range reqs.seen {
		require.Contains(t, r.System, "Indent with tabs.")
		require.NotContains(t, r.System, "Indent with nothing.")
	}
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep2.Rerun))
}

// A tools override narrows what the rerun is offered, never widens it:
// a tool the original was not offered is refused by name.
func TestRerunWithFewerTools(t *testing.T) {
	e := harnesstest.NewStock(t, scriptA)
	require.Equal(t, harness.StatusDone, e.RunApproved("t").Status)
	var offered []string
	for _, f := range logOf(t, e, "t") {
		if f.Kind == facts.KindSystemConfigured {
			p, err := facts.Decode[facts.SystemConfigured](f)
			require.NoError(t, err)
			offered = toolNames(p.Tools)
			break
		}
	}
	require.Contains(t, offered, "run_command")
	require.Contains(t, offered, "delegate", "the stock harness offers delegation")

	rt, actor, cm, ran := rerunOn(t, e, scriptA)
	reqs := &requests{Model: cm}
	rt.Services.Model = reqs
	base := rerun.Options{From: "t", Model: "scripted:b", Runtime: rt, Actor: actor}

	only := base
	only.Tools = []string{"write_file", "read_file"}
	rep, err := rerun.Run(ctx, only)
	require.NoError(t, err)
	require.Equal(t, rerun.VerdictMatched, rep.Verdict)
	require.Equal(t, int64(0), ran.Load())
	for _, r := range reqs.seen {
		require.Equal(t, []string{"read_file", "write_file"}, toolNames(r.Tools))
	}
	require.True(t, rep.ToolsChanged)
	require.Equal(t, []string{"tools=read_file,write_file"}, forkOf(t, e, rep.Rerun).Rerun.Overrides)
	require.NoError(t, audit.VerifyLog(ctx, e.Store, e.Stock.Actor, rep.Rerun))

	without := base
	without.WithoutTools = []string{"run_command", "delegate"}
	reqs.seen = nil
	rep2, err := rerun.Run(ctx, without)
	require.NoError(t, err)
	want := slices.DeleteFunc(slices.Clone(offered), func(n string) bool { return n == "run_command" || n == "delegate" })
	require.Equal(t, want, toolNames(reqs.seen[0].Tools))
	require.NotEqual(t, rep.Rerun, rep2.Rerun)
	require.Equal(t, []string{"without_tools=delegate,run_command"}, forkOf(t, e, rep2.Rerun).Rerun.Overrides)

	// Hostile: a tool never offered, by this harness or the original.
	bogus := base
	bogus.Tools = []string{"read_file", "rm_rf"}
	_, err = rerun.Run(ctx, bogus)
	require.ErrorIs(t, err, rerun.ErrOverride)
	require.Contains(t, err.Error(), `"rm_rf" was not offered to t`)

	// Hostile: a rerun of the narrowed rerun cannot widen back to a tool
	// this harness has but that rerun was not offered.
	wide := base
	wide.From, wide.Tools = rep.Rerun, []string{"read_file", "run_command"}
	_, err = rerun.Run(ctx, wide)
	require.ErrorIs(t, err, rerun.ErrOverride)
	require.Contains(t, err.Error(), `"run_command" was not offered to `+rep.Rerun)
	require.False(t, errors.Is(err, rerun.ErrOtherRerun))
	// The same order of names or another is one key.
	swapped := base
	swapped.Tools = []string{"read_file", "write_file", "read_file"}
	require.Equal(t, rerun.KeyOf(only), rerun.KeyOf(swapped))
}

// A system prompt override is named by the prompt's digest: the same
// prompt is one key, another prompt another.
func TestSystemPromptOverride(t *testing.T) {
	a := rerun.SystemPromptOverride([]byte("a"))
	require.Equal(t, "system_prompt=sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb", a)
	require.Equal(t, a, rerun.SystemPromptOverride([]byte("a")))
	require.NotEqual(t, a, rerun.SystemPromptOverride([]byte("b")))
	ka := rerun.KeyOf(rerun.Options{Model: "scripted:x", Overrides: []string{a}})
	kb := rerun.KeyOf(rerun.Options{Model: "scripted:x", Overrides: []string{rerun.SystemPromptOverride([]byte("b"))}})
	require.NotEqual(t, ka, kb)
}
