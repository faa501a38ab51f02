package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
)

// Each key, and the word it stands for, in any case, is one answer to a
// confirmation; a word that merely holds a key ("perhaps" holds an a) is
// none, and neither is an empty reply.
func TestParseConfirmKey(t *testing.T) {
	for reply, want := range map[string]drive.ConfirmKey{
		"y": drive.ConfirmYes, "YES": drive.ConfirmYes, " y ": drive.ConfirmYes,
		"a": drive.ConfirmAlways, "always": drive.ConfirmAlways,
		"p": drive.ConfirmProject, "Project": drive.ConfirmProject,
		"n": drive.ConfirmNo, "no": drive.ConfirmNo,
		"d": drive.ConfirmDeny, "deny": drive.ConfirmDeny,
		"s": drive.ConfirmSkip, "skip": drive.ConfirmSkip,
		"": drive.ConfirmNoKey, "perhaps": drive.ConfirmNoKey, "yy": drive.ConfirmNoKey, "x": drive.ConfirmNoKey,
	} {
		require.Equal(t, want, drive.ParseConfirmKey(reply), "%q", reply)
	}
}

// The reply each key gives a confirmation: approve, always (with its
// rule, for the thread or the project), deny and go on, deny and stop;
// skip, no key and an always without its rule answer nothing.
func TestConfirmKeyReply(t *testing.T) {
	p := drive.Pending{Wait: fold.Wait{Kind: fold.WaitConfirmation, RequestID: "1-c1", Thread: "t1.1"}}
	r, ok := drive.ConfirmYes.Reply(p, "ana", "", "")
	require.True(t, ok)
	require.Equal(t, drive.Reply{Kind: fold.WaitConfirmation, Request: "t1.1/1-c1", By: "ana", Approved: true}, r)

	r, ok = drive.ConfirmAlways.Reply(p, "ana", "write_file:a/*", "")
	require.True(t, ok)
	require.True(t, r.Approved)
	require.Equal(t, "write_file:a/*", r.Always)
	require.False(t, r.Project)
	r, ok = drive.ConfirmProject.Reply(p, "ana", "write_file:a/*", "")
	require.True(t, ok)
	require.True(t, r.Project)

	r, ok = drive.ConfirmNo.Reply(p, "ana", "", "why")
	require.True(t, ok)
	require.False(t, r.Approved)
	require.Equal(t, facts.DenyContinue, r.Then)
	require.Equal(t, "why", r.Reason)
	r, ok = drive.ConfirmDeny.Reply(p, "ana", "", "")
	require.True(t, ok)
	require.Equal(t, facts.DenyStop, r.Then)

	for _, k := range []drive.ConfirmKey{drive.ConfirmSkip, drive.ConfirmNoKey} {
		_, ok := k.Reply(p, "ana", "", "")
		require.False(t, ok)
	}
	_, ok = drive.ConfirmAlways.Reply(p, "ana", "", "")
	require.False(t, ok, "an always with no rule")

	require.True(t, drive.ConfirmDeny.Stops())
	require.True(t, drive.ConfirmAlways.Stops())
	require.False(t, drive.ConfirmYes.Stops())
	require.False(t, drive.ConfirmNo.Stops())
}

func TestParseOtherKeys(t *testing.T) {
	for _, c := range []struct {
		reply      string
		want       facts.Decision
		skip, ok   bool
		action     facts.ElicitAction
		eskip, eok bool
	}{
		{"a", facts.DecisionAccept, false, true, facts.ElicitAccept, false, true},
		{"r", facts.DecisionRetry, false, true, "", false, false},
		{"B", facts.DecisionAbandon, false, true, "", false, false},
		{"d", "", false, false, facts.ElicitDecline, false, true},
		{"cancel", "", false, false, facts.ElicitCancel, false, true},
		{"s", "", true, true, "", true, true},
		{"", "", false, false, "", false, false},
		{"abandoned", "", false, false, "", false, false},
	} {
		d, skip, ok := drive.ParseReconcileKey(c.reply)
		require.Equal(t, []any{c.want, c.skip, c.ok}, []any{d, skip, ok}, "reconcile %q", c.reply)
		a, skip, ok := drive.ParseElicitKey(c.reply)
		require.Equal(t, []any{c.action, c.eskip, c.eok}, []any{a, skip, ok}, "elicit %q", c.reply)
	}
	act, ok := drive.ParsePlanKey("Yes")
	require.True(t, act && ok)
	act, ok = drive.ParsePlanKey("s")
	require.True(t, !act && ok)
	_, ok = drive.ParsePlanKey("act")
	require.False(t, ok)
}

// A budget's reply raises by what it says; Enter skips; an amount that is
// none is an error.
func TestParseRaiseReply(t *testing.T) {
	p := drive.Pending{Wait: fold.Wait{Kind: fold.WaitBudget, RequestID: "budget-1"}}
	r, ok, err := drive.ParseRaiseReply(p, "$5", "ana")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, drive.Reply{Kind: fold.WaitBudget, Request: "budget-1", USD: 5, By: "ana"}, r)
	_, ok, err = drive.ParseRaiseReply(p, "  ", "ana")
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = drive.ParseRaiseReply(p, "lots", "ana")
	require.Error(t, err)
}
