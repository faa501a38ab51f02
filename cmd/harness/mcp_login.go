package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
)

// mcpServer is the server named name of the merged settings
// (stock.Place.MCPServer); none is a usage error.
func (a *app) mcpServer(p stock.Place, name string) (mcp.Server, error) {
	srv, err := p.MCPServer(a.getenv, name)
	if errors.Is(err, stock.ErrNoMCPServer) {
		return srv, asUsage(err)
	}
	return srv, err
}

func (a *app) mcpLoginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "login NAME",
		Short: "Log in to a remote MCP server that asks for authorization (OAuth), keeping its tokens in your configuration",
		Long: `Log in to the remote MCP server NAME of the settings as the MCP authorization
spec (2025-11-25) says: the server's protected resource metadata names its
authorization server; harness registers itself there (or uses the client the
server's "oauth" settings name) and prints the URL to authorize it at (and
starts $BROWSER with it when that is set). Your browser comes back to a
callback on 127.0.0.1 that lives for this login only. The tokens are kept in
$XDG_CONFIG_HOME/harness/mcp-tokens (mode 0600), for the server's URL, never in
the workspace; no command or local server can read them (the sandbox hides the
directory), and no fact records them. Later runs send the token to that URL
only and refresh it when it expires; when it cannot be refreshed, the server
says it needs a login again.

A server declared by a workspace file is there only once you trust the file
(harness trust).`,
		Args: args(1, 1, "the server's name"),
		RunE: runE(func(cmd *cobra.Command, argv []string) error {
			p, err := a.place()
			if err != nil {
				return err
			}
			srv, err := a.mcpServer(p, argv[0])
			if err != nil {
				return err
			}
			store, err := p.MCPTokens(a.getenv)
			if err != nil {
				return err
			}
			open := func(u string) error {
				fmt.Fprintf(a.stderr, "Authorize harness for MCP server %s: open this URL in your browser:\n\n  %s\n\nwaiting for the browser to come back…\n", present.EscapeLine(argv[0]), present.EscapeLine(u))
				if err := mcp.StartBrowser(a.getenv("BROWSER"), u, os.Stderr); err != nil {
					fmt.Fprintf(a.stderr, "$BROWSER (%s) could not start: %v\n", present.EscapeLine(a.getenv("BROWSER")), err)
				}
				return nil
			}
			res, err := mcp.Login(cmd.Context(), argv[0], srv, mcp.LoginOptions{Store: *store, Open: open, Version: version()})
			if err != nil {
				return err
			}
			if a.jsonOut() {
				return a.printJSON(map[string]any{"server": argv[0], "url": res.Server, "scopes": res.Scopes, "refreshable": res.Refreshable, "expiry": res.Expiry})
			}
			refresh := "no refresh token: log in again when it expires"
			if res.Refreshable {
				refresh = "refreshed when it expires"
			}
			fmt.Fprintf(a.stdout, "logged in to %s (%s); scopes %s; %s\n", present.EscapeLine(argv[0]), present.EscapeLine(res.Server),
				present.EscapeLine(strings.Join(res.Scopes, " ")), refresh)
			return nil
		}),
	}
	return cmd
}

func (a *app) mcpLogoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget the tokens kept for a remote MCP server",
		Args:  args(1, 1, "the server's name"),
		RunE: runE(func(cmd *cobra.Command, argv []string) error {
			p, err := a.place()
			if err != nil {
				return err
			}
			srv, err := a.mcpServer(p, argv[0])
			if err != nil {
				return err
			}
			store, err := p.MCPTokens(a.getenv)
			if err != nil {
				return err
			}
			had, err := mcp.Logout(argv[0], srv, *store, nil)
			if err != nil {
				return err
			}
			if had {
				fmt.Fprintf(a.stdout, "forgot the tokens of %s\n", present.EscapeLine(argv[0]))
			} else {
				fmt.Fprintf(a.stdout, "no tokens were kept for %s\n", present.EscapeLine(argv[0]))
			}
			return nil
		}),
	}
}
