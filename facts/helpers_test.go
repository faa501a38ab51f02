package facts_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
)

func dec[T any](f facts.Fact) (any, error) {
	v, err := facts.Decode[T](f)
	return v, err
}

var decoders = map[facts.Kind]func(facts.Fact) (any, error){
	facts.KindUserMessage:           dec[facts.UserMessage],
	facts.KindSystemConfigured:      dec[facts.SystemConfigured],
	facts.KindModelTurn:             dec[facts.ModelTurn],
	facts.KindModelCallFailed:       dec[facts.ModelAttempt],
	facts.KindConfirmationRequested: dec[facts.ConfirmationRequested],
	facts.KindConfirmationAnswered:  dec[facts.ConfirmationAnswered],
	facts.KindQuestionAsked:         dec[facts.QuestionAsked],
	facts.KindQuestionAnswered:      dec[facts.QuestionAnswered],
	facts.KindActionRequested:       dec[facts.ActionRequested],
	facts.KindActionStarted:         dec[facts.ActionStarted],
	facts.KindActionCompleted:       dec[facts.ActionCompleted],
	facts.KindActionInterrupted:     dec[facts.ActionInterrupted],
	facts.KindCheckRecorded:         dec[facts.CheckRecorded],
	facts.KindEffectReconciled:      dec[facts.EffectReconciled],
	facts.KindContextCompacted:      dec[facts.ContextCompacted],
	facts.KindBudgetExhausted:       dec[facts.BudgetExhausted],
	facts.KindBudgetSet:             dec[facts.BudgetSet],
	facts.KindBudgetRaised:          dec[facts.BudgetRaised],
	facts.KindBudgetShared:          dec[facts.BudgetShared],
	facts.KindTransitionFailed:      dec[facts.TransitionFailed],
	facts.KindThreadForked:          dec[facts.ThreadForked],
	facts.KindWorkspaceRestored:     dec[facts.WorkspaceRestored],
	facts.KindPolicySet:             dec[facts.PolicySet],
	facts.KindWorkspaceChanged:      dec[facts.WorkspaceChanged],
	facts.KindContextBoundsSet:      dec[facts.ContextBoundsSet],
	facts.KindInstructionsRead:      dec[facts.InstructionsRead],
	facts.KindPlanModeSet:           dec[facts.PlanModeSet],
	facts.KindPlanRecorded:          dec[facts.PlanRecorded],
	facts.KindChildSpawned:          dec[facts.ChildSpawned],
	facts.KindThreadSpawned:         dec[facts.ThreadSpawned],
	facts.KindThreadEnded:           dec[facts.ThreadEnded],
	facts.KindChildReported:         dec[facts.ChildReported],
	facts.KindThreadStopped:         dec[facts.ThreadStopped],
	facts.KindHookRan:               dec[facts.HookRan],
	facts.KindStopRequested:         dec[facts.StopRequested],
	facts.KindOutputChecked:         dec[facts.OutputChecked],
	facts.KindRerunTurn:             dec[facts.RerunTurn],
	facts.KindWorktreeFinished:      dec[facts.WorktreeResult],
	facts.KindModelSampled:          dec[facts.ModelSampled],
}

// decodeAny decodes f's payload into its registered type.
func decodeAny(f facts.Fact, _ string) (any, error) {
	return decoders[f.Kind](f)
}

// normalize renders a payload as JSON, so that RawJSON written with spaces
// and stored compact compare equal.
func normalize(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
