package drive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
)

// What a person types at the terminal to raise a budget.
func TestParseRaise(t *testing.T) {
	for in, want := range map[string]facts.Spend{
		"$5":                {USD: 5},
		"+$2.50":            {USD: 2.5},
		"5 usd":             {USD: 5},
		"5usd":              {USD: 5},
		"5$":                {USD: 5},
		"200000 tokens":     {Tokens: 200000},
		"200k tokens":       {Tokens: 200000},
		"2m tokens":         {Tokens: 2000000},
		"1 token":           {Tokens: 1},
		"$5, 200000 tokens": {USD: 5, Tokens: 200000},
		"  $1 $2 ":          {USD: 3},
		"+100000tokens":     {Tokens: 100000},
		"1 turn":            {Turns: 1},
		"+5 turns":          {Turns: 5},
		"3turns, $1":        {Turns: 3, USD: 1},
	} {
		got, err := drive.ParseRaise(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{
		"", "5", "five dollars", "$-5", "$NaN", "$Inf", "$1e400", "-5 tokens", "1.5 tokens",
		"$0", "0 tokens", "99999999999999999999 tokens", "9223372036854775807m tokens",
		"9223372036854775807 tokens 1 token", "$5 \x1b[31m",
		"0 turns", "-1 turns", "1.5 turns", "2147483647 turns 1 turn", "5k turns",
	} {
		_, err := drive.ParseRaise(in)
		require.ErrorIs(t, err, drive.ErrBadReply, "%q", in)
	}
}
