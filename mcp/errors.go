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
