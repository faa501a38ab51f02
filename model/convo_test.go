package model_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

func TestPaired(t *testing.T) {
	user := func(s string) facts.Message { return facts.Message{Role: facts.RoleUser, Text: s} }
	calls := func(ids ...string) facts.Message {
		m := facts.Message{Role: facts.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, facts.ToolCall{ID: id, Name: "t"})
		}
		return m
	}
	result := func(id, s string) facts.Message { return facts.Message{Role: facts.RoleTool, ToolCallID: id, Text: s} }
	tests := []struct {
		name     string
		in, want []facts.Message
	}{
		{"in shape already", []facts.Message{user("a"), calls("1", "2"), result("1", "r1"), result("2", "r2"), user("b")},
			[]facts.Message{user("a"), calls("1", "2"), result("1", "r1"), result("2", "r2"), user("b")}},
		{"results in the order of the calls", []facts.Message{calls("1", "2"), result("2", "r2"), result("1", "r1")},
			[]facts.Message{calls("1", "2"), result("1", "r1"), result("2", "r2")}},
		{"a message between a call and its result", []facts.Message{calls("1"), user("wait"), result("1", "r1")},
			[]facts.Message{calls("1"), result("1", "r1"), user("wait")}},
		{"a call with no result gets one", []facts.Message{calls("1", "2"), result("1", "r1"), user("b")},
			[]facts.Message{calls("1", "2"), result("1", "r1"), result("2", model.NoResult), user("b")}},
		{"a result whose call was compacted away is a user message", []facts.Message{user("Summary"), result("1", "r1")},
			[]facts.Message{user("Summary"), user("Result of tool call 1:\nr1")}},
		{"a result is not taken by a later turn's call of the same id", []facts.Message{calls("1"), result("1", "r1"), calls("1"), result("1", "r2")},
			[]facts.Message{calls("1"), result("1", "r1"), calls("1"), result("1", "r2")}},
		{"empty", nil, []facts.Message{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := model.Paired(tc.in)
			for i := range got {
				got[i].Seq = 0
			}
			require.Equal(t, tc.want, got)
		})
	}
}
