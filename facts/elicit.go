package facts

import "fmt"

// Elicit is what makes a question.asked an elicitation: an MCP server
// asked a person for input while one of the thread's actions — a call of
// one of its tools — ran. The question's Text is the server's message,
// Schema the form it asked for. All of it is the server's word: untrusted,
// bounded by the client before it is recorded, escaped where shown.
type Elicit struct {
	// ActionID is the running action whose call the server asked during.
	ActionID string `msgpack:"action_id,omitempty" json:"action_id,omitempty"`
	// Server is the name of the MCP server that asked, as the settings
	// name it.
	Server string `msgpack:"server,omitempty" json:"server,omitempty"`
	// Schema is the requested schema: a flat JSON object schema whose
	// properties are strings, numbers, integers, booleans or enums.
	Schema RawJSON `msgpack:"schema,omitempty" json:"schema,omitempty"`
	// Sensitive names the properties that look like a secret (a
	// password, a token, a key): a front end says plainly that the server,
	// not harness, asks for them.
	Sensitive []string `msgpack:"sensitive,omitempty" json:"sensitive,omitempty"`
}

// Validate requires the action and the server.
func (e Elicit) Validate() error {
	if err := required("elicit.action_id", e.ActionID); err != nil {
		return err
	}
	return required("elicit.server", e.Server)
}

// ElicitAction is a person's answer to an elicitation, as MCP names it.
type ElicitAction string

// The answers to an elicitation.
const (
	// ElicitAccept: the person gave the input asked for (Content).
	ElicitAccept ElicitAction = "accept"
	// ElicitDecline: the person refused to give it.
	ElicitDecline ElicitAction = "decline"
	// ElicitCancel: the person dismissed the question without a choice.
	ElicitCancel ElicitAction = "cancel"
)

// Validate accepts accept, decline and cancel.
func (a ElicitAction) Validate() error {
	return oneOf("elicited.action", a, ElicitAccept, ElicitDecline, ElicitCancel)
}

// Elicited is the answer to an elicitation: what the server is sent.
type Elicited struct {
	Action ElicitAction `msgpack:"action,omitempty" json:"action,omitempty"`
	// Content is the input given, a JSON object, with accept only.
	Content RawJSON `msgpack:"content,omitempty" json:"content,omitempty"`
}

// Validate requires a known action, and content only with accept.
func (e Elicited) Validate() error {
	if err := e.Action.Validate(); err != nil {
		return err
	}
	if e.Action != ElicitAccept && len(e.Content) > 0 {
		return fmt.Errorf("elicited: content with %s (only accept carries content)", e.Action)
	}
	return nil
}
