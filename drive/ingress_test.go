package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
)

func TestDraftOf(t *testing.T) {
	d, req, err := drive.DraftOf(facts.KindConfirmationAnswered, []byte(`{"request_id":"1-c","approved":false}`), "ann")
	require.NoError(t, err)
	require.Equal(t, "1-c", req)
	p, err := facts.Decode[facts.ConfirmationAnswered](facts.Fact{Kind: d.Kind, Data: d.Data})
	require.NoError(t, err)
	require.Equal(t, "ann", p.By, "an answer is by who posts it")
	require.Equal(t, facts.DenyContinue, p.Then, "a denial that says nothing lets the model go on, as deny does")

	d, req, err = drive.DraftOf(facts.KindEffectReconciled, []byte(`{"action_id":"1-c","decision":"accept","by":"ann"}`), "ann")
	require.NoError(t, err)
	require.Equal(t, "1-c", req)
	require.Equal(t, facts.KindEffectReconciled, d.Kind)

	for _, c := range []struct {
		kind facts.Kind
		raw  string
		want string
	}{
		// Hostile: a payload that says someone else gave it.
		{facts.KindConfirmationAnswered, `{"request_id":"1-c","approved":true,"by":"root"}`, `confirmation.answered: "by": "root" names someone else; an answer records who gives it (ann): leave "by" out`},
		{facts.KindPolicySet, `{"approve":"all","by":"admin"}`, `"admin" names someone else`},
		{facts.KindBudgetRaised, `{"by":"bob"}`, `"bob" names someone else`},
		{facts.KindQuestionAnswered, `{"request_id":"q","text":"x","by":"bob"}`, `"bob" names someone else`},
		// A field the kind has not, smuggled in.
		{facts.KindConfirmationAnswered, `{"request_id":"1-c","approved":true,"always":"run_command:*"}`, `confirmation.answered is not a payload of that kind: json: unknown field "always"; e.g. '{"request_id"`},
		{facts.KindConfirmationAnswered, `{"request_id":"1-c","approved":true} {"request_id":"1-d","approved":true}`, "confirmation.answered: more than one JSON value"},
		{facts.KindUserMessage, `{"text":"  \n"}`, "user.message: the text is empty; say something, e.g. '{\"text\": \"Also update the docs\"}'"},
		{facts.KindUserMessage, `[1]`, "user.message is not a payload of that kind"},
		{"no.such.kind", `{}`, "no.such.kind: the kind has no payload type"},
	} {
		_, _, err := drive.DraftOf(c.kind, []byte(c.raw), "ann")
		require.ErrorContains(t, err, c.want, c.raw)
	}
	require.Equal(t, `'{"add": {"usd": 2}}'`, drive.Example(facts.KindBudgetRaised))
	require.Equal(t, "{}", drive.Example(facts.KindThreadForked))
}
