package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

var updateCorruptions = flag.Bool("update-corruptions", false, "rewrite the seeded corruptions in testdata/corrupt at the repo root")

// corruptDir holds a good export and its seeded corruptions; the script
// testdata/script/corrupt.txtar checks that replay --verify --file rejects
// each, naming the failure.
const corruptDir = "../../testdata/corrupt"

// TestGenerateCorruptions rewrites the seeded corruptions from a thread the
// stock harness runs (go test ./cmd/harness -run TestGenerateCorruptions
// -update-corruptions). Without the flag it only checks that the files are
// there.
func TestGenerateCorruptions(t *testing.T) {
	if !*updateCorruptions {
		for _, name := range []string{"good", "altered-payload", "removed-fact", "reordered", "report-for-observation", "injected", "truncated"} {
			require.FileExists(t, filepath.Join(corruptDir, name+".jsonl"))
		}
		return
	}
	good := goodLog(t)
	idx := func(kind facts.Kind) int {
		i := slices.IndexFunc(good, func(f facts.Fact) bool { return f.Kind == kind })
		require.GreaterOrEqual(t, i, 0, kind)
		return i
	}
	rewrite := func(i int, kind facts.Kind, payload any) []facts.Fact {
		fs := slices.Clone(good)
		d, err := facts.NewDraft(kind, fs[i].Cause, payload)
		require.NoError(t, err)
		fs[i].Data = d.Data
		return fs
	}
	files := map[string][]facts.Fact{"good": good}

	// The user's message asked for 3000, not 300: its hash changes, and the
	// next fact's link to it breaks.
	files["altered-payload"] = rewrite(0, facts.KindUserMessage, facts.UserMessage{Text: "Set the cache TTL to 3000"})

	// The approval is gone.
	i := idx(facts.KindConfirmationAnswered)
	files["removed-fact"] = slices.Delete(slices.Clone(good), i, i+1)

	// The confirmation comes before the request it confirms.
	fs := slices.Clone(good)
	i = idx(facts.KindConfirmationRequested)
	fs[i-1], fs[i] = fs[i], fs[i-1]
	files["reordered"] = fs

	// The worker's claimed states stand in for the runtime's observation,
	// and the chain is rebuilt so that only the record's own consistency
	// can tell.
	i = idx(facts.KindActionCompleted)
	c, err := facts.Decode[facts.ActionCompleted](good[i])
	require.NoError(t, err)
	c.Observation.Before, c.Observation.After = "sha256:what-the-worker-said-before", c.Report.ClaimedState
	files["report-for-observation"] = relink(rewrite(i, facts.KindActionCompleted, c))

	// A model turn the fold never enabled, with a rebuilt chain.
	d, err := facts.NewDraft(facts.KindModelTurn, "infer/turn/7", facts.ModelTurn{Turn: 7, Text: "All done, trust me."})
	require.NoError(t, err)
	fs = slices.Insert(slices.Clone(good), 3, facts.Fact{Thread: good[0].Thread, Kind: d.Kind, Cause: d.Cause, Data: d.Data, At: good[2].At})
	files["injected"] = relink(fs)

	require.NoError(t, os.MkdirAll(corruptDir, 0o755))
	for name, fs := range files {
		var b bytes.Buffer
		require.NoError(t, facts.WriteJSON(&b, fs...))
		require.NoError(t, os.WriteFile(filepath.Join(corruptDir, name+".jsonl"), b.Bytes(), 0o644))
	}
	// The last line was cut off half-way through writing.
	var b bytes.Buffer
	require.NoError(t, facts.WriteJSON(&b, good...))
	out := b.Bytes()
	last := bytes.LastIndexByte(out[:len(out)-1], '\n') + 1
	out = out[:last+(len(out)-last)/2]
	require.NoError(t, os.WriteFile(filepath.Join(corruptDir, "truncated.jsonl"), out, 0o644))
}

// relink renumbers facts and rebuilds their hash chain, as a forger would.
func relink(fs []facts.Fact) []facts.Fact {
	var prev facts.Hash
	for i := range fs {
		fs[i].Seq, fs[i].Prev = uint64(i+1), prev
		prev = fs[i].Hash()
	}
	return fs
}

// goodLog runs the tour's thread with the stock harness and returns its
// log: run, parked, approved, resumed, done.
func goodLog(t *testing.T) []facts.Fact {
	ctx := context.Background()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "cache.toml"), []byte("ttl_seconds = 60\n"), 0o644))
	place := stock.Place{Root: root, Store: filepath.Join(root, ".harness")}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	store, err := thread.OpenPebble(place.DB(), thread.WithClock(func() time.Time { at = at.Add(time.Second); return at }))
	require.NoError(t, err)
	defer store.Close()
	script, err := model.ParseScript("script.jsonl", []byte(writeScript))
	require.NoError(t, err)
	cfg, err := harness.NewConfig(harness.WithModelName("scripted:script.jsonl"), harness.WithModelBackoff(0))
	require.NoError(t, err)
	stock, err := stock.NewStock(place, cfg)
	require.NoError(t, err)
	svc, err := stock.Services(script, store)
	require.NoError(t, err)
	rt, err := harness.NewRuntime(store, svc, cfg)
	require.NoError(t, err)
	out, err := rt.Start(ctx, stock.Actor, "t1", "Set the cache TTL to 300")
	require.NoError(t, err)
	require.Equal(t, harness.StatusParked, out.Status)
	d, err := facts.NewDraft(facts.KindConfirmationAnswered, "", facts.ConfirmationAnswered{RequestID: out.Waits[0].RequestID, Approved: true, By: "ana"})
	require.NoError(t, err)
	_, err = rt.Post(ctx, stock.Actor, "t1", d, drive.AnswerKey(d.Kind, out.Waits[0].RequestID))
	require.NoError(t, err)
	out, err = rt.Resume(ctx, stock.Actor, "t1")
	require.NoError(t, err)
	require.Equal(t, harness.StatusDone, out.Status)
	require.NoError(t, audit.VerifyLog(ctx, store, stock.Actor, "t1"))
	var log []facts.Fact
	for f, err := range store.Read(ctx, "t1", 1) {
		require.NoError(t, err)
		log = append(log, f)
	}
	return log
}
