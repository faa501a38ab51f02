package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
)

// A server that asks for a scope in the middle of a run — a call refused
// 403 insufficient_scope after the connection was made — is not a call in
// doubt: the server refused it, so the report is failed (permission),
// saying which scope and how to log in; the next login asks for the scope.
func TestOAuthStepUpDuringACall(t *testing.T) {
	as := newAuthServer(t)
	ps := newProtectedServer(t, as)
	store := &mcp.TokenStore{Dir: t.TempDir()}
	srv := mcp.Server{URL: ps.URL + "/mcp"}
	var b browser
	_, err := mcp.Login(context.Background(), "remote", srv, mcp.LoginOptions{Store: *store, Open: b.open, Timeout: 30 * time.Second})
	require.NoError(t, err)
	c, err := mcp.Connect(context.Background(), mcp.Servers{"remote": srv}, mcp.Options{Workspace: t.TempDir(), Tokens: store, ConnectTimeout: 20 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	who := toolNamed(c, "mcp__remote__whoami")
	require.NotNil(t, who, c.Status()[0].Error)
	ps.mu.Lock()
	ps.need = "admin"
	ps.mu.Unlock()
	r, err := who.Execute(context.Background(), callOf(who, "a1", `{}`))
	require.NoError(t, err)
	require.Equal(t, facts.StatusFailed, r.Status)
	require.False(t, r.InDoubt, "a refused call did not happen: %s", r.Error)
	require.Equal(t, facts.ClassPermission, r.MCP.Class, r.Error)
	require.Contains(t, r.Error, `asks for scope "tools admin"`)
	require.Contains(t, r.Error, "harness mcp login remote")
	require.False(t, strings.Contains(r.Error, "unknown"), r.Error)
	res, err := mcp.Login(context.Background(), "remote", srv, mcp.LoginOptions{Store: *store, Open: b.open, Timeout: 30 * time.Second})
	require.NoError(t, err)
	require.Contains(t, res.Scopes, "admin", "the next login asks for the scope")
}
