package mcp

import "errors"

// The errors of logging in to remote servers (OAuth). (ErrConfig is in
// config.go.)
var (
	// ErrLoginNeeded: a remote server asks for authorization and no
	// usable token is kept for it; harness mcp login NAME gets one.
	ErrLoginNeeded = errors.New("the server needs authorization")
	// ErrTokenStore: the token store cannot be used (no user
	// configuration directory, or one inside the workspace).
	ErrTokenStore = errors.New("mcp token store")
	// ErrLogin: logging in to a server failed (the browser's answer, the
	// authorization server's, or a check of them).
	ErrLogin = errors.New("mcp login")
)

// The errors of servers' prompts (Client.Prompts, Client.Prompt).
var (
	// ErrNoPrompts: the server named is not one of this thread's
	// connected servers that declared prompts.
	ErrNoPrompts = errors.New("no connected MCP server of that name offers prompts")
	// ErrPromptArgs: a prompt's arguments are not those it declares
	// (one unknown, a required one missing, too many, too long).
	ErrPromptArgs = errors.New("prompt arguments")
	// ErrPromptTooLarge: a prompt's text is over MaxPrompt.
	ErrPromptTooLarge = errors.New("the prompt's text is too large")
	// ErrPromptEmpty: a prompt's messages have no text.
	ErrPromptEmpty = errors.New("the server's prompt has no text")
	// ErrPromptRef: a reference to a prompt is not SERVER/PROMPT
	// (ParsePromptRef).
	ErrPromptRef = errors.New("want SERVER/PROMPT")
)

// ErrSessionGone: a remote server no longer knows the session a call was
// made in (HTTP 404): a question's answer cannot be delivered after a
// restart (see resume.go).
var ErrSessionGone = errors.New("the server no longer knows the session (HTTP 404)")
