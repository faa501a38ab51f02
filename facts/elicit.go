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
	// Resume, when set, says the call goes on at a remote server over a
	// resumable streamable HTTP session: a process that did not make the
	// call (the one that did died) can still deliver the answer, and read
	// the call's result (see ElicitResume). Unset, the answer reaches the
	// server only while the process that made the call lives.
	Resume *ElicitResume `msgpack:"resume,omitempty" json:"resume,omitempty"`
}

// Validate requires the action and the server.
func (e Elicit) Validate() error {
	if err := required("elicit.action_id", e.ActionID); err != nil {
		return err
	}
	if err := required("elicit.server", e.Server); err != nil {
		return err
	}
	if e.Resume != nil {
		return e.Resume.Validate()
	}
	return nil
}

// ElicitResume is where an elicitation sits in a resumable streamable
// HTTP session (MCP 2025-11-25, "Resumability and Redelivery"): the
// answer is the JSON-RPC response to Request, posted in the session; the
// call's result follows Event on the stream the server opened for the
// call, read again with Last-Event-ID. The session id itself is a
// credential of the person's, kept beside their tokens, never in a fact:
// Session is its digest, which names it there.
type ElicitResume struct {
	// URL is the server's endpoint the call was made at, as the call's
	// request records it (MCPCall.Endpoint: no user, query or fragment).
	URL string `msgpack:"url,omitempty" json:"url,omitempty"`
	// Session is the hex SHA-256 of the session id.
	Session string `msgpack:"session,omitempty" json:"session,omitempty"`
	// Protocol is the protocol revision the session speaks.
	Protocol string `msgpack:"protocol,omitempty" json:"protocol,omitempty"`
	// Event is the SSE event id that carried the server's request.
	Event string `msgpack:"event,omitempty" json:"event,omitempty"`
	// Request is the JSON-RPC id of the server's elicitation/create;
	// Call the id of the client's tools/call it was sent during.
	Request RawJSON `msgpack:"request,omitempty" json:"request,omitempty"`
	Call    RawJSON `msgpack:"call,omitempty" json:"call,omitempty"`
}

// Validate requires every field.
func (r ElicitResume) Validate() error {
	for _, f := range []struct{ name, v string }{{"url", r.URL}, {"session", r.Session}, {"protocol", r.Protocol},
		{"event", r.Event}, {"request", string(r.Request)}, {"call", string(r.Call)}} {
		if err := required("elicit.resume."+f.name, f.v); err != nil {
			return err
		}
	}
	return nil
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
