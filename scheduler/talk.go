package scheduler

import (
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
)

// msg is one message of the conversation as the fold keeps it. A tool's
// result from an action's completion (done set) is kept as the records it
// is said from, and said (ToolResult) only when a model turn's request is
// made: a fold of a long log — a verifier's, which never asks for a turn —
// would otherwise hold every result twice, as recorded and as said. Its
// Text is then what was added after the result (a hook's note), if
// anything.
type msg struct {
	facts.Message
	done  *facts.ActionCompleted
	check *facts.CheckRecorded
}

// message is m as the model is shown it.
func (m *msg) message() facts.Message {
	out := m.Message
	if m.done != nil {
		out.Text = ToolResult(*m.done, m.check) + m.Text
	}
	return out
}

// sayWith makes m the result of the completion done with its check, in
// place of what it said.
func (m *msg) sayWith(done *facts.ActionCompleted, check *facts.CheckRecorded) {
	m.done, m.check, m.Text = done, check, ""
}

// say adds a message to the conversation.
func (s *state[S]) say(m facts.Message) {
	if s.lean == nil {
		s.messages = append(s.messages, msg{Message: m})
	}
}

// sayResult adds the result of the completion done as a tool message m,
// said when asked for (see msg).
func (s *state[S]) sayResult(m facts.Message, done *facts.ActionCompleted) {
	if s.lean == nil {
		s.messages = append(s.messages, msg{Message: m, done: done})
	}
}

// lend returns the conversation the whole log gives, as the fold keeps it,
// lent: the caller must not change its messages (appending to it copies).
// It costs nothing, so a projection may make a model turn's request at
// every fact (a verifier projects at every cause); the messages are said
// only for a turn that runs (see infer).
func (s *state[S]) lend() []msg {
	if s.lean != nil {
		return nil // a lean fold keeps no conversation (see lean.go)
	}
	if s.talk != nil {
		return s.talk()
	}
	if s.whole != nil {
		return s.whole().lend()
	}
	s.lent = len(s.messages)
	return s.messages[:s.lent:s.lent]
}

// conversation returns the conversation the whole log gives: the
// caller's own.
func (s *state[S]) conversation() []facts.Message { return said(s.lend()) }

// said returns the messages ms as the model is shown them.
func said(ms []msg) []facts.Message {
	out := make([]facts.Message, len(ms))
	for i := range ms {
		out[i] = ms[i].message()
	}
	return out
}

// editToolMessage edits the last tool message match accepts, in place,
// first unsharing the conversation when a projection has it on loan.
func (s *state[S]) editToolMessage(match func(facts.Message) bool, edit func(*msg)) {
	for i := len(s.messages) - 1; i >= 0; i-- {
		if m := s.messages[i].Message; m.Role == facts.RoleTool && match(m) {
			if i < s.lent {
				s.messages, s.lent = slices.Clone(s.messages), 0
			}
			edit(&s.messages[i])
			return
		}
	}
}
