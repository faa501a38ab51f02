package drive

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/scheduler"
)

// An answer to an MCP server's form may hold a secret the server asked
// for (a password): whoever answers the same question again, from a
// terminal, the page, the API or the MCP server, is told it was answered
// and how (accept, by whom), never what was typed.
func TestAnsweredElicitationSaysNoInput(t *testing.T) {
	const secret = "hunter2-do-not-show"
	given := facts.QuestionAnswered{RequestID: "1-a-e1", By: "ana",
		Elicited: &facts.Elicited{Action: facts.ElicitAccept, Content: facts.RawJSON(`{"password":"` + secret + `"}`)}}
	d, err := facts.NewDraft(facts.KindQuestionAnswered, "", given)
	require.NoError(t, err)

	said := sayAnswer(d.Kind, d.Data)
	require.NotContains(t, said, secret)
	require.Equal(t, "1-a-e1 accept for the MCP server (the input not shown) by ana", said)

	r := scheduler.Reading{Elicitations: []scheduler.Elicitation{{
		Asked:  facts.QuestionAsked{RequestID: "1-a-e1", Elicit: &facts.Elicit{ActionID: "1-a", Server: "s"}},
		Answer: &given, AnswerSeq: 9,
	}}}
	seq, answer, said, ok := answerTo(r, facts.KindQuestionAnswered, "1-a-e1")
	require.True(t, ok)
	require.Equal(t, uint64(9), seq)
	require.NotContains(t, said, secret)
	require.True(t, strings.HasPrefix(said, "1-a-e1 accept for the MCP server"), said)
	require.Contains(t, answer, secret, "the answer compared is the whole answer: another input is another answer")

	other := given
	other.Elicited = &facts.Elicited{Action: facts.ElicitAccept, Content: facts.RawJSON(`{"password":"other"}`)}
	d2, err := facts.NewDraft(facts.KindQuestionAnswered, "", other)
	require.NoError(t, err)
	require.False(t, SameAnswer(facts.Fact{Kind: d.Kind, Data: d.Data}, d2))
}
