package scheduler

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seed-7cc7a084/harness/effect"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// MaxInvalidOutput is how many final answers in a row may be invalid
// against the thread's output schema before the thread fails (class
// invalid_output): each invalid one is returned to the model with its
// errors, for another turn.
const MaxInvalidOutput = 3

// CompileOutputSchema compiles a JSON Schema a thread's final answer is to
// be valid against, or says why it cannot be one (see CompileSchema):
// nothing is loaded from anywhere else (no $ref reaches a file or the
// network), so a check gives the same verdict wherever and whenever it
// runs.
func CompileOutputSchema(schema []byte) (*CompiledSchema, error) {
	s, err := CompileSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOutputSchema, err)
	}
	return s, nil
}

// CheckOutput checks a final answer against an output schema: the verdict
// output.checked records. A final answer is one JSON document, alone or in
// one fenced code block. An invalid one gets the first error the validator
// found (when there are several, which one it finds first may differ from
// run to run: the verdict, valid or not, does not).
func CheckOutput(schema facts.OutputSchema, turn int, answer string) facts.OutputChecked {
	v := facts.OutputChecked{Turn: turn, Digest: schema.Digest}
	s, err := CompileOutputSchema(schema.Schema)
	if err != nil {
		v.Errors = []string{bound(err.Error())}
		return v
	}
	text := unfence(answer)
	if _, err := decodeOne([]byte(text)); err != nil {
		v.Errors = []string{bound("the answer is not one JSON document: " + err.Error())}
		return v
	}
	if err := s.Validate([]byte(text)); err != nil {
		v.Errors = []string{bound(err.Error())}
		return v
	}
	v.Valid, v.Output = true, facts.RawJSON(text)
	return v
}

// bound cuts an error to facts.MaxOutputError bytes, on a rune boundary.
func bound(s string) string {
	if len(s) <= facts.MaxOutputError {
		return s
	}
	cut := facts.MaxOutputError - len("…")
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// unfence returns the answer without surrounding space and, when the whole
// answer is one fenced code block, without its fence.
func unfence(answer string) string {
	t := strings.TrimSpace(answer)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return t
	}
	body := t[3 : len(t)-3]
	nl := strings.IndexByte(body, '\n')
	if nl < 0 || strings.Contains(body, "```") {
		return t
	}
	return strings.TrimSpace(body[nl+1:])
}

// outputInstruction is what the model is told of the thread's output
// schema, after the system prompt.
func outputInstruction(o *facts.OutputSchema) string {
	return "[harness] Your final answer (a reply with no tool calls) must be one JSON document, and nothing else, valid against this JSON Schema:\n" +
		string(o.Schema) + "\nAn answer that is not will be returned to you with the validation errors."
}

// invalidNotice is what the model is told after an invalid final answer.
func invalidNotice(p facts.OutputChecked) string {
	return "[harness] Your final answer is not valid against the output schema:\n- " + strings.Join(p.Errors, "\n- ") +
		"\nAnswer again with one JSON document, and nothing else, that is valid against it."
}

func checkKey(turn int) string { return "output/check/" + strconv.Itoa(turn) }

// checkOutput enables checking the final answer of the latest turn.
func (s *state[S]) checkOutput() fold.Transition[S] {
	schema, turn, answer := *s.system.Output, s.answerTurn, s.answer
	whole := s.whole
	return fold.Transition[S]{Key: checkKey(turn), Effect: effect.AndThen(effect.Succeed[S](struct{}{}), func(struct{}) effect.Effect[S, []facts.Draft] {
		v := CheckOutput(schema, turn, answer)
		if !v.Valid {
			// The count of those before is the whole log's: read when
			// the check runs, not whenever what is enabled is said.
			v.InARow = 1
			if whole != nil {
				v.InARow += whole().invalidInARow
			}
		}
		return drafts[S](facts.KindOutputChecked, v)
	})}
}

// outputChecked folds the verdict on a final answer: a valid one is the
// thread's output; an invalid one goes back to the model, and after
// MaxInvalidOutput in a row the thread fails.
func (s *state[S]) outputChecked(f facts.Fact, p facts.OutputChecked) {
	if p.Turn != s.turns {
		// (A verdict on a turn before the latest is no longer news.)
		return
	}
	s.checked = &p
	s.invalidInARow = p.InARow
	if p.Valid {
		return
	}
	s.userAfterTurn = true
	s.say(facts.Message{Role: facts.RoleUser, Text: invalidNotice(p), Seq: f.Seq})
	if p.InARow >= MaxInvalidOutput {
		s.failure = fmt.Sprintf("%s failed (%s): the final answer was not valid against the output schema %d times in a row (its errors are on output.checked): resume the thread to give the model another turn",
			checkKey(p.Turn), facts.ClassInvalidOutput, p.InARow)
		s.retry = inferKey(p.Turn + 1)
	}
}
