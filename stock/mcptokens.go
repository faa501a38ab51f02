package stock

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/present"
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

// MCPServer is the MCP server named name of the settings in force (the
// merged settings of the place, with getenv's user settings): a server
// of a workspace file the person has not trusted is not there, and the
// error, ErrNoMCPServer, says so; a setting this program does not know
// is no reason to refuse one.
func (p Place) MCPServer(getenv func(string) string, name string) (mcp.Server, error) {
	l, err := p.LoadLayered(getenv)
	if err != nil && !errors.Is(err, ErrUnknownSetting) {
		return mcp.Server{}, err
	}
	if srv, ok := l.Settings.MCPServers[name]; ok {
		return srv, nil
	}
	for _, src := range l.Untrusted() {
		if slices.Contains(src.Ignored, "mcpServers") {
			return mcp.Server{}, fmt.Errorf("%w %q in the settings in force: the servers of %s are left out until you trust it (harness trust)", ErrNoMCPServer, name, present.EscapeLine(src.Path))
		}
	}
	return mcp.Server{}, fmt.Errorf("%w %q in the settings (harness mcp list shows them)", ErrNoMCPServer, name)
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
