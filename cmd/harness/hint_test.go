package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
)

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
