package audit_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the expected output of audit/testdata")

// The files in testdata are cases of the verifier, written as the
// scheduler's are (scheduler/datadriven_test.go): a command, the lines
// that make the log, "----", and what the verifier says of it, up to a
// blank line ("ok", or its error). Lines starting with # between cases
// are comments. The command is verify (audit.VerifyFacts of the stock
// harness's actor); the lines, applied in order:
//
//	from FILE          the facts of a JSON Lines export, FILE relative to
//	                   the repository's testdata (the seeded corruptions
//	                   of testdata/corrupt are cases here)
//	drop SEQ           the fact at position SEQ removed
//	swap A B           the facts at positions A and B swapped
//	data SEQ JSON      the payload of the fact at position SEQ replaced
//	fact KIND CAUSE JSON
//	                   a fact appended, linked to the one before
//	relink             the seqs and the hash chain made anew, as a
//	                   forger would
//
// go test ./audit -run TestData -update rewrites the outputs.
func TestData(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	actor := harnesstest.NewStock(t, harnesstest.TextScript).Stock.Actor
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runVerifyFile(t, actor, file) })
	}
}

func runVerifyFile(t *testing.T, actor harness.Actor, file string) {
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	var out strings.Builder
	lines := strings.Split(string(raw), "\n")
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			out.WriteString(l + "\n")
			i++
			continue
		}
		where, command := fmt.Sprintf("%s:%d", file, i+1), strings.TrimSpace(l)
		var log []string
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			log = append(log, lines[i])
		}
		require.Less(t, i, len(lines), "%s: no ---- after the log", where)
		var want []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			want = append(want, lines[i])
		}
		require.Equal(t, "verify", command, "%s: the one command is verify", where)
		got := verifyCase(t, actor, where, log)
		fmt.Fprintf(&out, "%s\n%s\n----\n%s\n", command, strings.Join(log, "\n"), got)
		if !*update {
			require.Equal(t, strings.Join(want, "\n"), got, where)
		}
	}
	if *update {
		require.NoError(t, os.WriteFile(file, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644))
	}
}

// verifyCase makes the log the lines say and verifies it.
func verifyCase(t *testing.T, actor harness.Actor, where string, lines []string) string {
	var log []facts.Fact
	at := func(pos string) int {
		n, err := strconv.Atoi(pos)
		require.NoError(t, err, "%s: position %q", where, pos)
		require.True(t, n >= 1 && n <= len(log), "%s: position %d of a log of %d", where, n, len(log))
		return n - 1
	}
	for _, l := range lines {
		verb, rest, _ := strings.Cut(l, " ")
		switch verb {
		case "from":
			raw, err := os.Open(filepath.Join("..", "testdata", rest))
			require.NoError(t, err, where)
			log, err = facts.ParseJSON(raw)
			raw.Close()
			if err != nil {
				return "unreadable: " + err.Error()
			}
		case "drop":
			i := at(rest)
			log = slices.Delete(log, i, i+1)
		case "swap":
			a, b, _ := strings.Cut(rest, " ")
			i, j := at(a), at(b)
			log[i], log[j] = log[j], log[i]
		case "data":
			pos, payload, _ := strings.Cut(rest, " ")
			i := at(pos)
			log[i].Data = payloadOf(t, where, log[i].Kind, payload)
		case "fact":
			parts := strings.SplitN(rest, " ", 3)
			require.Len(t, parts, 3, "%s: fact KIND CAUSE JSON", where)
			f := facts.Fact{Kind: facts.Kind(parts[0]), Cause: parts[1], Data: payloadOf(t, where, facts.Kind(parts[0]), parts[2])}
			if n := len(log); n > 0 {
				f.Thread, f.Seq, f.Prev, f.At = log[n-1].Thread, log[n-1].Seq+1, log[n-1].Hash(), log[n-1].At
			}
			log = append(log, f)
		case "relink":
			log = relink(log)
		default:
			t.Fatalf("%s: unknown line %q (want from, drop, swap, data, fact or relink)", where, l)
		}
	}
	require.NotEmpty(t, log, "%s: an empty log", where)
	got := "ok"
	if err := audit.VerifyFacts(actor, log[0].Thread, seq2(log)); err != nil {
		got = err.Error()
	}
	// A lean verifier (audit.Verifier.Lean), which reads the log again
	// for what it lets go of, says the same of every case.
	require.Equal(t, got, verifyLean(actor, log), "%s: a lean verifier says otherwise", where)
	return got
}

// verifyLean verifies log as VerifyFacts does, by a lean verifier that
// reads it again from the slice.
func verifyLean(actor harness.Actor, log []facts.Fact) string {
	v := audit.NewVerifier(actor, log[0].Thread)
	v.Lean(fold.SourceFunc(func(from uint64) iter.Seq2[facts.Fact, error] {
		return func(yield func(facts.Fact, error) bool) {
			for _, f := range log {
				if f.Seq >= from && !yield(f, nil) {
					return
				}
			}
		}
	}))
	for _, f := range log {
		if err := v.Add(f); err != nil {
			return err.Error()
		}
	}
	if err := v.End(); err != nil {
		return err.Error()
	}
	return "ok"
}

// payloadOf is the stored payload of kind read from its JSON (the kinds
// a case may write).
func payloadOf(t *testing.T, where string, kind facts.Kind, payload string) []byte {
	read, ok := payloads[kind]
	require.True(t, ok, "%s: no case writes a %s", where, kind)
	v, err := read([]byte(payload))
	require.NoError(t, err, "%s: the payload of a %s", where, kind)
	d, err := facts.NewDraft(kind, "", v)
	require.NoError(t, err, where)
	return d.Data
}

var payloads = map[facts.Kind]func([]byte) (any, error){
	facts.KindUserMessage:          fromJSON[facts.UserMessage],
	facts.KindModelTurn:            fromJSON[facts.ModelTurn],
	facts.KindConfirmationAnswered: fromJSON[facts.ConfirmationAnswered],
	facts.KindActionStarted:        fromJSON[facts.ActionStarted],
	facts.KindActionCompleted:      fromJSON[facts.ActionCompleted],
	facts.KindCheckRecorded:        fromJSON[facts.CheckRecorded],
	facts.KindEffectReconciled:     fromJSON[facts.EffectReconciled],
	facts.KindHookRan:              fromJSON[facts.HookRan],
	facts.KindModelSampled:         fromJSON[facts.ModelSampled],
}

func fromJSON[T any](raw []byte) (any, error) {
	var v T
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	err := dec.Decode(&v)
	return v, err
}
