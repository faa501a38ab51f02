package tell_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/tell"
)

func TestBudgetAndSearchText(t *testing.T) {
	st := drive.State{Thread: "t1", Status: harness.StatusParked, Turns: 3, MaxTurns: 5,
		Budget: &drive.Budget{Spent: facts.Spend{USD: 1.5, Tokens: 900}, Limit: facts.Spend{USD: 2}}}
	var b bytes.Buffer
	tell.Budget(&b, st, "give one")
	require.Equal(t, "thread t1 (parked): spent $1.5000 of $2.0000; 3 of 5 model turns\n", b.String())
	st.Budget.Limit.Tokens = 1000
	require.Equal(t, "$1.5000, 900 tokens", tell.Amount(st.Budget.Spent, st.Budget.Limit))
	b.Reset()
	st.Budget, st.MaxTurns = nil, 0
	tell.Budget(&b, st, "give one")
	require.Equal(t, "thread t1 (parked): no budget in money or tokens (give one)\n", b.String())
	require.Equal(t, "parked", tell.BudgetDocOf(st).Status)

	b.Reset()
	require.NoError(t, tell.SearchHits(&b, nil))
	require.Equal(t, "no facts found\n", b.String())
	b.Reset()
	at := time.Date(2026, 1, 2, 3, 4, 0, 0, time.Local)
	require.NoError(t, tell.SearchHits(&b, []drive.SearchHit{{Thread: "t1", Seq: 4, Kind: facts.KindUserMessage, At: at, Excerpt: "go\x1b"}}))
	require.Regexp(t, `^t1 #4\s+user.message\s+2026-01-02 03:04\s+go\\x1b\n$`, b.String())

	require.Equal(t, `by:ana 'two words' 'it'\''s' ''`, tell.ShellArgs([]string{"by:ana", "two words", "it's", ""}))
}
