package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/scheduler"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// BenchmarkCLIResume runs `harness resume` — a new process, as a person
// runs it — on a parked thread of 100,000 facts and on one of 6, in the
// same workspace, alternating op by op. Both threads record a policy and
// a workspace and wait for the confirmation of a write; the resume finds
// them parked, answers nothing (--no-input) and runs nothing. Both were
// resumed once before the timer starts, so each resumes from the snapshot
// that resume kept, as the Resume that parks a thread keeps one. ratio is the 100,000-fact resume's time over the
// 6-fact one's (aim: ≤ 3).
func BenchmarkCLIResume(b *testing.B) {
	bin, err := exec.LookPath("harness")
	require.NoError(b, err, "TestMain puts harness on $PATH")
	dir := b.TempDir()
	place := stock.Place{Root: dir, Store: filepath.Join(dir, ".harness")}
	store, err := thread.OpenPebble(place.DB())
	require.NoError(b, err)
	const long = 100_000
	buildParkedCLI(b, store, "long", stock.WorkspaceName(dir), long)
	buildParkedCLI(b, store, "short", stock.WorkspaceName(dir), 6)
	parkCLI(b, place, store, "long", long)
	parkCLI(b, place, store, "short", 6)
	require.NoError(b, store.Close())
	env := append(os.Environ(), "NO_COLOR=1", "XDG_CONFIG_HOME="+b.TempDir())
	resume := func(id string, seq int) time.Duration {
		cmd := exec.Command(bin, "resume", id, "--no-input", "-o", "json")
		cmd.Dir, cmd.Env = dir, env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			b.Fatal(err)
		}
		var res struct {
			Status harness.Status `json:"status"`
			Seq    int            `json:"seq"`
		}
		if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Status != harness.StatusParked || res.Seq != seq {
			b.Fatalf("resume %s: %+v (%v), want parked at seq %d\nstdout: %s\nstderr: %s", id, res, err, seq, out.String(), errb.String())
		}
		return d
	}
	resume("long", long)
	resume("short", 6)
	var longT, shortT time.Duration
	for b.Loop() {
		longT += resume("long", long)
		shortT += resume("short", 6)
	}
	n := float64(b.N)
	b.ReportMetric(float64(longT)/n/float64(time.Millisecond), "ms/resume@100k")
	b.ReportMetric(float64(shortT)/n/float64(time.Millisecond), "ms/resume@6")
	b.ReportMetric(float64(longT)/float64(shortT), "ratio")
}

// parkCLI resumes the thread id of n facts with the stock harness of
// place, as the Resume that parked it would have: it stays parked, runs
// nothing, and keeps the thread's snapshot.
func parkCLI(b testing.TB, place stock.Place, store thread.Store, id string, n int) {
	cfg, err := harness.NewConfig(harness.WithWorkspace(stock.WorkspaceName(place.Root)))
	require.NoError(b, err)
	st, err := stock.NewStock(place, cfg)
	require.NoError(b, err)
	defer st.Close()
	svc, err := st.Services(nil, stock.BlobsOf(store))
	require.NoError(b, err)
	rt, err := harness.NewRuntime(store, svc, st.Config)
	require.NoError(b, err)
	out, err := rt.Resume(context.Background(), st.Actor, id)
	require.NoError(b, err)
	require.Equal(b, harness.StatusParked, out.Status, out.Reason)
	require.EqualValues(b, n, out.Seq)
}

// buildParkedCLI appends a coding thread of n facts (n ≥ 6) to store, in
// batches of a thousand, with the kinds and causes the stock harness
// records: its task, its policy (with the task, as harness run posts it),
// its configuration in workspace, then model turns each reading a file
// (the turn, the request, the start, the completion), and last a turn
// whose write waits for a person's confirmation.
func buildParkedCLI(b testing.TB, store thread.Store, id, workspace string, n int) {
	ctx := context.Background()
	var batch []facts.Draft
	var head uint64
	added := 0
	add := func(kind facts.Kind, cause string, payload any) {
		d, err := facts.NewDraft(kind, cause, payload)
		require.NoError(b, err)
		batch = append(batch, d)
		added++
		if len(batch) == 1000 || added == n {
			h, err := store.Append(ctx, id, head, batch...)
			require.NoError(b, err)
			head, batch = h.Seq, batch[:0]
		}
	}
	request := func(ref, tool string, needs action.Capability, args string) {
		add(facts.KindActionRequested, "tool/request/"+ref, facts.ActionRequested{
			ActionID: ref, CallID: "call_1", Capability: string(needs), Instruction: tool + " " + args,
			IdempotencyKey: "tool/execute/" + ref, RequestedBy: "coding-actor", ActorID: "coding-actor", Adapter: tool,
			Payload: facts.RawJSON(args), Confirm: needs != action.Read,
		})
	}
	add(facts.KindUserMessage, facts.IngressCause(harness.StartKey), facts.UserMessage{Text: "Find why the session cache expires early and fix it."})
	pol, err := drive.StartingPolicy(facts.PolicySet{Allow: []string{"read_file"}, By: "tester"})
	require.NoError(b, err)
	pol.Draft.Cause = facts.IngressCause(pol.Key)
	batch = append(batch, pol.Draft)
	added++
	add(facts.KindSystemConfigured, "system/configure", facts.SystemConfigured{
		Prompt: harness.DefaultSystemPrompt, Model: "scripted:none.jsonl", Version: "bench", Workspace: workspace,
		Tools: []facts.ToolSchema{{Name: "write_file"}, {Name: "read_file"}, {Name: "run_command"}},
	})
	const tail = 3
	turn := 0
	for n-tail-added >= 4 {
		turn++
		ref := fmt.Sprintf("%d-call_1", turn)
		args := fmt.Sprintf(`{"path":"internal/auth/file%05d.go"}`, turn)
		add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{
			Turn: turn, Text: "Reading the next file to find where the session expires.",
			ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "read_file", Args: args}},
			Usage:     facts.Usage{InputTokens: 1800, OutputTokens: 200},
		})
		request(ref, "read_file", action.Read, args)
		add(facts.KindActionStarted, "tool/start/"+ref, facts.ActionStarted{ActionID: ref})
		add(facts.KindActionCompleted, "tool/execute/"+ref, facts.ActionCompleted{
			ActionID:    ref,
			Report:      facts.Report{Status: facts.StatusSucceeded, Stdout: strings.Repeat("func expire(s *Session) { s.ttl = 0 }\n", 5)},
			EffectState: facts.EffectReported,
		})
	}
	for i := 1; n-tail-added > 0; i++ {
		add(facts.KindUserMessage, facts.IngressCause("remark-"+strconv.Itoa(i)), facts.UserMessage{Text: "Look at the refresh path too."})
	}
	turn++
	ref := fmt.Sprintf("%d-call_1", turn)
	args := `{"path":"internal/auth/session.go","content":"ttl = 300"}`
	add(facts.KindModelTurn, "infer/turn/"+strconv.Itoa(turn), facts.ModelTurn{
		Turn: turn, Text: "Setting the TTL.", ToolCalls: []facts.ToolCall{{ID: "call_1", Name: "write_file", Args: args}},
	})
	request(ref, "write_file", action.Write, args)
	add(facts.KindConfirmationRequested, "confirm/"+ref, facts.ConfirmationRequested{
		RequestID: ref, CallID: ref, Tool: "write_file", Args: args, Digest: scheduler.Digest("write_file", args),
	})
	require.Empty(b, batch, "every fact is appended")
	require.EqualValues(b, n, head)
}
