package scheduler_test

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// prefix is the first n facts of a log, counting what is read of it.
type prefix struct {
	log   []facts.Fact
	n     int
	reads *[]uint64 // the seq each Read started from
}

func (p prefix) Thread() string { return "t" }
func (p prefix) Seq() uint64    { return uint64(p.n) }
func (p prefix) Read(from uint64) iter.Seq2[facts.Fact, error] {
	*p.reads = append(*p.reads, from)
	return func(yield func(facts.Fact, error) bool) {
		for _, f := range p.log[max(from, 1)-1 : p.n] {
			if !yield(f, nil) {
				return
			}
		}
	}
}

// restored is a scheduler restored from a snapshot a scheduler made after
// log[:n], with log[n:] stepped after it.
func restored(t *testing.T, log []facts.Fact, n int, reads *[]uint64) *scheduler.Scheduler[S] {
	t.Helper()
	before := scheduler.New(dataEnv())
	for _, f := range log[:n] {
		require.NoError(t, before.Step(f))
	}
	snap, err := before.Snapshot()
	require.NoError(t, err)
	s := scheduler.New(dataEnv())
	require.NoError(t, s.Restore(snap, prefix{log: log, n: n, reads: reads}))
	again, err := s.Snapshot()
	require.NoError(t, err)
	require.Equal(t, snap, again, "restored, the same snapshot")
	for _, f := range log[n:] {
		require.NoError(t, s.Step(f))
	}
	return s
}

// answers are answers to every request a log names, and to some it does
// not.
func answers(t *testing.T, log []facts.Fact) []facts.Draft {
	var out []facts.Draft
	add := func(kind facts.Kind, p any) {
		d, err := facts.NewDraft(kind, "ingress/x", p)
		require.NoError(t, err)
		out = append(out, d)
	}
	ids := map[string]bool{"nobody": true, "1-c": true, "q-1": true}
	for _, f := range log {
		switch f.Kind {
		case facts.KindConfirmationRequested:
			p, err := facts.Decode[facts.ConfirmationRequested](f)
			require.NoError(t, err)
			ids[p.RequestID] = true
		case facts.KindQuestionAsked:
			p, err := facts.Decode[facts.QuestionAsked](f)
			require.NoError(t, err)
			ids[p.RequestID] = true
		case facts.KindActionRequested:
			p, err := facts.Decode[facts.ActionRequested](f)
			require.NoError(t, err)
			ids[p.ActionID] = true
		}
	}
	for id := range ids {
		add(facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: id, Approved: true})
		add(facts.KindConfirmationAnswered, facts.ConfirmationAnswered{RequestID: id, Approved: false, Digest: "feed"})
		add(facts.KindQuestionAnswered, facts.QuestionAnswered{RequestID: id, Text: "a.toml"})
		add(facts.KindEffectReconciled, facts.EffectReconciled{ActionID: id, Decision: facts.DecisionAccept})
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// requireSame requires a restored scheduler to say of its log what the
// scheduler that stepped every fact says: what is enabled, the reading,
// the conversation, the answers it takes, the checks, and its snapshot.
func requireSame(t *testing.T, where string, log []facts.Fact, whole, s *scheduler.Scheduler[S]) {
	t.Helper()
	require.Equal(t, describeOutput(whole.Output()), describeOutput(s.Output()), "%s: output", where)
	for _, d := range answers(t, log) {
		require.Equal(t, errText(whole.Accept(d)), errText(s.Accept(d)), "%s: accept %s %s", where, d.Kind, d.Data)
	}
	require.Equal(t, whole.Messages(), s.Messages(), "%s: the conversation", where)
	wr, werr := whole.Reading()
	gr, gerr := s.Reading()
	require.Equal(t, errText(werr), errText(gerr), where)
	require.Equal(t, wr, gr, "%s: the reading", where)
	require.Equal(t, errText(whole.CheckEnd()), errText(s.CheckEnd()), where)
	ws, werr := whole.Snapshot()
	gs, gerr := s.Snapshot()
	require.Equal(t, errText(werr), errText(gerr), where)
	require.Equal(t, ws, gs, "%s: restored and folded on, the snapshot of the whole fold", where)
}

// Every log of the data files, restored from a snapshot after each of its
// facts and stepped to its end, reads as the whole fold reads it.
func TestSnapshotOfEveryDataLog(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	cases := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		require.NoError(t, err)
		lines := strings.Split(string(raw), "\n")
		for i := 0; i < len(lines); i++ {
			cmd := strings.TrimSpace(lines[i])
			if cmd != "fold" && cmd != "read" && cmd != "check" {
				continue
			}
			start := i + 1
			for i++; lines[i] != "----"; i++ {
			}
			where := fmt.Sprintf("%s:%d", file, start)
			log := link(parseLog(t, where, lines[start:i]))
			whole := scheduler.New(dataEnv())
			for _, f := range log {
				require.NoError(t, whole.Step(f))
			}
			for n := 1; n <= len(log); n++ {
				var reads []uint64
				s := restored(t, log, n, &reads)
				out := s.Output()
				infers := slices.ContainsFunc(out.Transitions, func(tr fold.Transition[S]) bool { return strings.HasPrefix(tr.Key, "infer/turn/") })
				if !infers && !oddKeys(t, log) {
					require.Empty(t, reads, "%s restored at %d: what is enabled is said without the facts before the snapshot", where, n)
				}
				requireSame(t, fmt.Sprintf("%s restored at %d", where, n), log, whole, s)
				cases++
			}
		}
	}
	t.Logf("%d restores compared", cases)
	require.Greater(t, cases, 100)
}

// oddKeys reports whether a request of log names an idempotency key other
// than its own action's (the data files' requests often name none).
func oddKeys(t *testing.T, log []facts.Fact) bool {
	for _, f := range log {
		if f.Kind == facts.KindActionRequested {
			p, err := facts.Decode[facts.ActionRequested](f)
			require.NoError(t, err)
			if p.IdempotencyKey != "tool/execute/"+p.ActionID {
				return true
			}
		}
	}
	return false
}

// logBuilder writes a coding thread's log as the runtime would.
type logBuilder struct {
	t   *testing.T
	log []facts.Fact
}

func (b *logBuilder) add(kind facts.Kind, cause string, payload any) uint64 {
	d, err := facts.NewDraft(kind, cause, payload)
	require.NoError(b.t, err)
	seq := uint64(len(b.log) + 1)
	f := facts.Fact{Thread: "t", Seq: seq, Kind: kind, Cause: cause, Data: d.Data, At: time.Unix(int64(seq), 0).UTC()}
	if seq > 1 {
		f.Prev = b.log[seq-2].Hash()
	}
	b.log = append(b.log, f)
	return seq
}

// link chains a log's facts as a store does: each Prev the hash of the
// fact before.
func link(log []facts.Fact) []facts.Fact {
	for i := 1; i < len(log); i++ {
		log[i].Prev = log[i-1].Hash()
	}
	return log
}

// turn adds model turn n calling read_file, and the call's request, start
// and completion; the completion's effect state is as given.
func (b *logBuilder) turn(n int, state facts.EffectState) {
	ref := fmt.Sprintf("%d-c", n)
	b.add(facts.KindModelTurn, fmt.Sprintf("infer/turn/%d", n), facts.ModelTurn{Turn: n, Text: fmt.Sprintf("reading %d", n),
		ToolCalls: []facts.ToolCall{{ID: "c", Name: "read_file", Args: fmt.Sprintf(`{"path":"f%d"}`, n)}}})
	b.add(facts.KindActionRequested, "tool/request/"+ref, facts.ActionRequested{ActionID: ref, Capability: "read", Adapter: "read_file",
		IdempotencyKey: "tool/execute/" + ref, Payload: facts.RawJSON(fmt.Sprintf(`{"path":"f%d"}`, n))})
	b.add(facts.KindActionStarted, "tool/start/"+ref, facts.ActionStarted{ActionID: ref})
	b.add(facts.KindActionCompleted, "tool/execute/"+ref, facts.ActionCompleted{ActionID: ref,
		Report: facts.Report{Status: facts.StatusSucceeded, Stdout: fmt.Sprintf("contents of f%d", n)}, EffectState: state})
}

// A long thread compacted now and then: restored, its conversation is
// read from where the compacted context starts, not from the first fact
// — and is the whole fold's. A fact that names an action of an earlier
// turn (a late reconciliation) has the conversation read whole.
func TestSnapshotConversationFromTheCompaction(t *testing.T) {
	b := &logBuilder{t: t}
	b.add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "read everything"})
	b.add(facts.KindSystemConfigured, "system/configure", facts.SystemConfigured{Prompt: "p", Model: "m"})
	for n := 1; n <= 30; n++ {
		state := facts.EffectReported
		if n == 7 {
			state = facts.EffectUnknown // open: a person may reconcile it later
		}
		b.turn(n, state)
		if n == 7 {
			b.add(facts.KindEffectReconciled, "ingress/r7", facts.EffectReconciled{ActionID: "7-c", Decision: facts.DecisionAccept, By: "ana"})
		}
		if n%10 == 0 {
			// The compactor's rule: everything but the latest message.
			upTo := b.log[len(b.log)-2].Seq
			b.add(facts.KindContextCompacted, fmt.Sprintf("compact/%d", upTo), facts.ContextCompacted{UpTo: upTo, Summary: fmt.Sprintf("read f1 to f%d", n)})
		}
	}
	at := len(b.log)
	whole := scheduler.New(dataEnv())
	for _, f := range b.log {
		require.NoError(t, whole.Step(f))
	}
	var reads []uint64
	s := restored(t, b.log, at, &reads)
	require.Equal(t, whole.Messages(), s.Messages())
	require.Len(t, reads, 1)
	lastCompaction := b.log[at-1]
	require.Equal(t, facts.KindContextCompacted, lastCompaction.Kind)
	require.Greater(t, reads[0], uint64(at-10), "read from the compacted context (seq %d), not the first fact", reads[0])
	require.Less(t, reads[0], lastCompaction.Seq)

	// Turns after the snapshot, one compacted: still from the compaction.
	for n := 31; n <= 34; n++ {
		b.turn(n, facts.EffectReported)
	}
	upTo := b.log[len(b.log)-2].Seq
	b.add(facts.KindContextCompacted, fmt.Sprintf("compact/%d", upTo), facts.ContextCompacted{UpTo: upTo, Summary: "read f1 to f34"})
	b.turn(35, facts.EffectReported)
	for _, f := range b.log[at:] {
		require.NoError(t, s.Step(f))
		require.NoError(t, whole.Step(f))
	}
	reads = reads[:0]
	require.Equal(t, whole.Messages(), s.Messages())
	require.Empty(t, reads, "the compaction after the snapshot is in what the scheduler holds")
	requireSame(t, "compacted", b.log, whole, s)

	// A late word on an action of an earlier turn: the conversation the
	// whole fold has is the one restored.
	late := &logBuilder{t: t, log: append([]facts.Fact(nil), b.log[:at]...)}
	late.add(facts.KindEffectReconciled, "ingress/late", facts.EffectReconciled{ActionID: "3-c", Decision: facts.DecisionAccept, By: "ana"})
	whole = scheduler.New(dataEnv())
	for _, f := range late.log {
		require.NoError(t, whole.Step(f))
	}
	reads = reads[:0]
	s = restored(t, late.log, at, &reads)
	requireSame(t, "a late reconciliation", late.log, whole, s)
	require.Contains(t, reads, uint64(1), "the whole log is read when a fact names what the compacted context does not hold")
}

// A request naming another action's idempotency key (only a hand-made
// log has one) has a restored scheduler look at the whole log's
// completions, as the whole fold does.
func TestSnapshotOddIdempotencyKey(t *testing.T) {
	b := &logBuilder{t: t}
	b.add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "read twice"})
	b.turn(1, facts.EffectReported)
	b.add(facts.KindModelTurn, "infer/turn/2", facts.ModelTurn{Turn: 2, ToolCalls: []facts.ToolCall{{ID: "c", Name: "read_file", Args: `{"path":"f1"}`}}})
	b.add(facts.KindActionRequested, "tool/request/2-c", facts.ActionRequested{ActionID: "2-c", Capability: "read", Adapter: "read_file",
		IdempotencyKey: "tool/execute/1-c", Payload: facts.RawJSON(`{"path":"f1"}`)})
	whole := scheduler.New(dataEnv())
	for _, f := range b.log {
		require.NoError(t, whole.Step(f))
	}
	for n := 1; n <= len(b.log); n++ {
		var reads []uint64
		s := restored(t, b.log, n, &reads)
		requireSame(t, fmt.Sprintf("restored at %d", n), b.log, whole, s)
	}
	// The whole fold replays the first completion rather than running
	// the call again; so does the restored one.
	var reads []uint64
	s := restored(t, b.log, len(b.log), &reads)
	out := s.Output()
	require.Len(t, out.Transitions, 1)
	require.Nil(t, out.Transitions[0].Staged, "a replayed completion, not a staged act")
}

// A snapshot that does not fit is refused: the facts out of order, a
// kind the scheduler does not fold, bytes cut short.
func TestSchedulerRestoreRefuses(t *testing.T) {
	b := &logBuilder{t: t}
	b.add(facts.KindUserMessage, "ingress/start", facts.UserMessage{Text: "read"})
	b.add(facts.KindSystemConfigured, "system/configure", facts.SystemConfigured{Prompt: "p"})
	b.turn(1, facts.EffectReported)
	s := scheduler.New(dataEnv())
	for _, f := range b.log {
		require.NoError(t, s.Step(f))
	}
	snap, err := s.Snapshot()
	require.NoError(t, err)
	var reads []uint64
	for i := range len(snap) {
		err := scheduler.New(dataEnv()).Restore(snap[:i], prefix{log: b.log, n: len(b.log), reads: &reads})
		require.Error(t, err, "cut at %d", i)
	}
	err = scheduler.New(dataEnv()).Restore(snap, prefix{log: b.log, n: 3, reads: &reads})
	require.ErrorContains(t, err, "out of order", "facts past the snapshot's seq")
	twice := scheduler.New(dataEnv())
	require.NoError(t, twice.Restore(snap, prefix{log: b.log, n: len(b.log), reads: &reads}))
	require.Error(t, twice.Restore(snap, prefix{log: b.log, n: len(b.log), reads: &reads}), "restored twice")
	require.Empty(t, reads)
}
