package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/fold"
)

// A worker's parked thread is woken by the answer alone: its hint names the
// answer, with no resume that would drive the thread in the answering
// command instead.
func TestWorkerHint(t *testing.T) {
	for _, tc := range []struct {
		name string
		wait fold.Wait
		want string
	}{
		{"confirmation", fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-c"},
			"answer: harness approve t7 1-c   (or: harness deny t7 1-c --reason '…')"},
		{"a child's confirmation", fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-c", Thread: "1-d"},
			"answer: harness approve t7 1-d/1-c   (or: harness deny t7 1-d/1-c --reason '…')"},
		{"question", fold.Wait{Kind: fold.WaitQuestion, RequestID: "1-q"},
			"answer: harness answer t7 '…'"},
		{"reconcile", fold.Wait{Kind: fold.WaitReconcile, RequestID: "1-a"},
			`settle: harness post t7 effect.reconciled --data '{"action_id": "1-a", "decision": "accept"}'   (accept, retry or abandon)`},
		{"a child's reconcile", fold.Wait{Kind: fold.WaitReconcile, RequestID: "1-a", Thread: "1-d"},
			`settle: harness post 1-d effect.reconciled --data '{"action_id": "1-a", "decision": "accept"}'   (accept, retry or abandon)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, workerHint("t7", drive.Pending{Wait: tc.wait}))
		})
	}
}
