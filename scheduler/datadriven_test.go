package scheduler_test

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/scheduler"
)

var update = flag.Bool("update", false, "rewrite the expected output of scheduler/testdata")

// The files in testdata are cases in the way Pebble writes its tests: a
// command, a log (one fact a line: KIND CAUSE JSON-PAYLOAD), "----", and
// what the scheduler says of it, up to a blank line. Lines starting with #
// between cases are comments. The commands:
//
//	fold   the log is folded; out: the phase, the turns, the waits, the
//	       transitions enabled (with their claim keys), the stop
//	check  the log but its last fact is folded; out: whether the last fact
//	       may come next (Check), and, if it may, whether the log may end
//	       there (CheckEnd)
//	accept the log but its last fact is folded; out: whether the last fact,
//	       posted from outside, is accepted (Accept)
//	read   the log is folded; out: its reading — every call, with its
//	       actions and their stages, and every question
//
// go test ./scheduler -run TestData -update rewrites the outputs.
func TestData(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runDataFile(t, file) })
	}
}

// dataCase is one case of a data file.
type dataCase struct {
	line    int    // of the command
	command string // fold, check or read
	log     []string
	want    string
}

func runDataFile(t *testing.T, file string) {
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	var out strings.Builder // the file as it would be with the outputs got
	lines := strings.Split(string(raw), "\n")
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			out.WriteString(l + "\n")
			i++
			continue
		}
		c := dataCase{line: i + 1, command: strings.TrimSpace(l)}
		i++
		for ; i < len(lines) && lines[i] != "----"; i++ {
			c.log = append(c.log, lines[i])
		}
		require.Less(t, i, len(lines), "%s:%d: no ---- after the log", file, c.line)
		i++
		var want []string
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			want = append(want, lines[i])
		}
		c.want = strings.Join(want, "\n")
		got := runDataCase(t, file, c)
		fmt.Fprintf(&out, "%s\n%s\n----\n%s\n", c.command, strings.Join(c.log, "\n"), got)
		if !*update {
			require.Equal(t, c.want, got, "%s:%d: %s", file, c.line, c.command)
		}
	}
	if *update {
		require.NoError(t, os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644))
	}
}

func runDataCase(t *testing.T, file string, c dataCase) string {
	log := parseLog(t, fmt.Sprintf("%s:%d", file, c.line), c.log)
	s := scheduler.New(dataEnv())
	switch c.command {
	case "fold":
		for _, f := range log {
			require.NoError(t, s.Step(f))
		}
		return describeOutput(s.Output())
	case "check":
		require.NotEmpty(t, log)
		for _, f := range log[:len(log)-1] {
			require.NoError(t, s.Step(f))
		}
		last := log[len(log)-1]
		if err := s.Check(last); err != nil {
			return "refused: " + err.Error()
		}
		require.NoError(t, s.Step(last))
		if err := s.CheckEnd(); err != nil {
			return "ok; the log cannot end here: " + err.Error()
		}
		return "ok"
	case "accept":
		require.NotEmpty(t, log)
		for _, f := range log[:len(log)-1] {
			require.NoError(t, s.Step(f))
		}
		last := log[len(log)-1]
		if err := s.Accept(facts.Draft{Kind: last.Kind, Cause: last.Cause, Data: last.Data}); err != nil {
			return "refused: " + err.Error()
		}
		return "accepted"
	case "read":
		for _, f := range log {
			require.NoError(t, s.Step(f))
		}
		r, err := s.Reading()
		require.NoError(t, err)
		return describeReading(r)
	}
	t.Fatalf("%s:%d: unknown command %q (want fold, check, accept or read)", file, c.line, c.command)
	return ""
}

// dataEnv is the environment of the data-driven cases: write_file asks
// for a confirmation and declares file_equals on its path; read_file asks
// nothing; run_command asks and needs execute.
func dataEnv() scheduler.Env[S] {
	return scheduler.Env[S]{
		Infer: func(scheduler.Request) effect.Effect[S, facts.ModelTurn] {
			return effect.Succeed[S](facts.ModelTurn{Text: "ok"})
		},
		Declare: func(call facts.ToolCall) effect.Effect[S, *facts.CheckSpec] {
			return effect.Succeed[S]((*facts.CheckSpec)(nil))
		},
		Act: func(action.Request, action.Observed, fold.Journal) effect.Effect[S, []facts.Draft] {
			return effect.Succeed[S]([]facts.Draft(nil))
		},
		Refuse: func(action.Request, action.Observed, string) effect.Effect[S, []facts.Draft] {
			return effect.Succeed[S]([]facts.Draft(nil))
		},
		Recover: func(facts.ActionStarted) effect.Effect[S, facts.ActionInterrupted] {
			return effect.Succeed[S](facts.ActionInterrupted{})
		},
		Policy: func(call facts.ToolCall) scheduler.Policy {
			switch call.Name {
			case "read_file":
				return scheduler.Policy{Confirm: false, Capability: action.Read}
			case "run_command":
				return scheduler.Policy{Confirm: true, Capability: action.Execute}
			}
			return scheduler.Policy{Confirm: true, Capability: action.Write}
		},
		Hook: func(int, facts.Hook, scheduler.HookInput) effect.Effect[S, facts.HookRan] {
			return effect.Succeed[S](facts.HookRan{Input: "x", Decision: facts.HookAllow})
		},
		Actor: "actor",
	}
}

// payloads are the kinds a data file may name, read from their JSON.
var payloads = map[facts.Kind]func([]byte) (any, error){
	facts.KindUserMessage:           fromJSON[facts.UserMessage],
	facts.KindSystemConfigured:      fromJSON[facts.SystemConfigured],
	facts.KindModelTurn:             fromJSON[facts.ModelTurn],
	facts.KindConfirmationRequested: fromJSON[facts.ConfirmationRequested],
	facts.KindConfirmationAnswered:  fromJSON[facts.ConfirmationAnswered],
	facts.KindQuestionAsked:         fromJSON[facts.QuestionAsked],
	facts.KindQuestionAnswered:      fromJSON[facts.QuestionAnswered],
	facts.KindActionRequested:       fromJSON[facts.ActionRequested],
	facts.KindActionStarted:         fromJSON[facts.ActionStarted],
	facts.KindActionCompleted:       fromJSON[facts.ActionCompleted],
	facts.KindActionInterrupted:     fromJSON[facts.ActionInterrupted],
	facts.KindCheckRecorded:         fromJSON[facts.CheckRecorded],
	facts.KindEffectReconciled:      fromJSON[facts.EffectReconciled],
	facts.KindContextCompacted:      fromJSON[facts.ContextCompacted],
	facts.KindBudgetExhausted:       fromJSON[facts.BudgetExhausted],
	facts.KindTransitionFailed:      fromJSON[facts.TransitionFailed],
	facts.KindWorkspaceRestored:     fromJSON[facts.WorkspaceRestored],
	facts.KindHookRan:               fromJSON[facts.HookRan],
	facts.KindOutputChecked:         fromJSON[facts.OutputChecked],
}

func fromJSON[T any](raw []byte) (any, error) {
	var v T
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	err := dec.Decode(&v)
	return v, err
}

// parseLog reads one fact a line: KIND CAUSE JSON.
func parseLog(t *testing.T, where string, lines []string) []facts.Fact {
	var out []facts.Fact
	for _, l := range lines {
		sc := bufio.NewScanner(strings.NewReader(l))
		sc.Split(bufio.ScanWords)
		var kind, cause string
		if sc.Scan() {
			kind = sc.Text()
		}
		if sc.Scan() {
			cause = sc.Text()
		}
		rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), kind)), cause))
		decode, ok := payloads[facts.Kind(kind)]
		require.True(t, ok, "%s: unknown kind %q in %q", where, kind, l)
		if rest == "" {
			rest = "{}"
		}
		p, err := decode([]byte(rest))
		require.NoError(t, err, "%s: %q", where, l)
		d, err := facts.NewDraft(facts.Kind(kind), cause, p)
		require.NoError(t, err, "%s: %q", where, l)
		out = append(out, facts.Fact{Thread: "t", Seq: uint64(len(out) + 1), Kind: d.Kind, Cause: d.Cause, Data: d.Data,
			At: time.Date(2026, 1, 1, 0, 0, len(out), 0, time.UTC)})
	}
	return out
}

func describeOutput(out fold.Output[S]) string {
	var b strings.Builder
	if v, ok := out.View.(scheduler.View); ok {
		fmt.Fprintf(&b, "phase: %s\nturns: %d\n", v.Phase, v.Turns)
		if len(v.Output) > 0 {
			fmt.Fprintf(&b, "output: %s\n", v.Output)
		}
	}
	waits := []string{}
	for _, w := range out.Waits {
		waits = append(waits, string(w.Kind)+" "+w.RequestID)
	}
	fmt.Fprintf(&b, "waits: %s\n", orDash(waits))
	enabled := []string{}
	for _, tr := range out.Transitions {
		k := tr.Key
		if tr.ClaimKey != "" {
			k += " (claims " + tr.ClaimKey + ")"
		}
		enabled = append(enabled, k)
	}
	fmt.Fprintf(&b, "enabled: %s", orDash(enabled))
	if out.Stop != nil {
		fmt.Fprintf(&b, "\nstop: %s: %s", out.Stop.Status, out.Stop.Reason)
		if out.Stop.Retry != "" {
			fmt.Fprintf(&b, " (retry %s)", out.Stop.Retry)
		}
	}
	return b.String()
}

func describeReading(r scheduler.Reading) string {
	var b strings.Builder
	fmt.Fprintf(&b, "turns: %d", r.Turns)
	for _, c := range r.Calls {
		fmt.Fprintf(&b, "\ncall %s: %s (turn %d, confirm %v)", c.Ref, c.Call.Name, c.Turn, c.Policy.Confirm)
		if c.Answer != nil {
			fmt.Fprintf(&b, ", answered approved=%v at seq %d", c.Answer.Approved, c.AnswerSeq)
		}
		for _, a := range c.Actions {
			fmt.Fprintf(&b, "\n  action %s: %s, open %v, last seq %d", a.ID, a.Stage(), a.Open(), a.Seq())
		}
	}
	for _, q := range r.Questions {
		id := "(not asked yet)"
		if q.Asked != nil {
			id = q.Asked.RequestID
		}
		fmt.Fprintf(&b, "\nquestion %s of turn %d: answered %v", id, q.Turn, q.Answer != nil)
	}
	for _, u := range r.Restored {
		fmt.Fprintf(&b, "\nundo at seq %d to seq %d", u.Seq, u.To)
	}
	return b.String()
}

func orDash(xs []string) string {
	if len(xs) == 0 {
		return "-"
	}
	return strings.Join(xs, ", ")
}
