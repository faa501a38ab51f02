package facts

// Role says who speaks in a Message.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of the conversation a model is shown. It is not a
// fact: the conversation is derived from a thread's facts (user messages,
// model turns, tool results, answers, compactions) each time a model turn
// is taken, so the log stays the only record.
type Message struct {
	Role Role `json:"role"`
	// Text is what was said: a prompt, a reply, a tool's result, an answer.
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message asked for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID names the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Seq is the seq of the fact the message comes from (for a summary,
	// the last seq it covers).
	Seq uint64 `json:"seq,omitempty"`
}
