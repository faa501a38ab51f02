package stock

import (
	"fmt"
	"path/filepath"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
)

// MCPTokensDirName is the name, beside the user's settings file, of the
// directory that keeps the tokens of the remote MCP servers the person
// logged in to (harness mcp login; see mcp.TokenStore).
const MCPTokensDirName = "mcp-tokens"

// MCPTokens is the person's store of MCP server tokens, from the
// environment getenv reads: $XDG_CONFIG_HOME/harness/mcp-tokens. It is
// refused (mcp.ErrTokenStore) when there is no user configuration
// directory, when it is not absolute, or when it lies inside the
// workspace or the store: a token is never kept where a command or the
// repository could read it. (The directory beside the user's settings is
// hidden from every command and local server: see NewStock.)
func (p Place) MCPTokens(getenv func(string) string) (*mcp.TokenStore, error) {
	dir := besideUserSettings(getenv, MCPTokensDirName)
	switch {
	case dir == "":
		return nil, fmt.Errorf("%w: %w", mcp.ErrTokenStore, ErrNoUserConfig)
	case !filepath.IsAbs(dir):
		return nil, fmt.Errorf("%w: %s is not an absolute path", mcp.ErrTokenStore, dir)
	case inWorkspace(p.Root, dir) || (p.Remote == "" && p.Store != "" && inWorkspace(p.Store, dir)):
		return nil, fmt.Errorf("%w: %s lies in the workspace %s or its store; run harness with $XDG_CONFIG_HOME outside them", mcp.ErrTokenStore, dir, p.Root)
	}
	return &mcp.TokenStore{Dir: dir}, nil
}

// hasRemote reports whether servers declares a remote (http) server.
func hasRemote(servers mcp.Servers) bool {
	for _, s := range servers {
		if s.Transport() == facts.MCPHTTP {
			return true
		}
	}
	return false
}
