package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/mcpserver"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

func (a *app) mcpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Tools from MCP servers (list), and harness as an MCP server (serve)",
		Long: `MCP servers are declared in the settings file (.harness/config.json) under
"mcpServers", in the shape of Claude Code's .mcp.json:

  {"mcpServers": {
     "fs":     {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
     "github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}}

Their tools are offered to the model as mcp__<server>__<tool>; every call is an
action like any other: requested before it runs, confirmed by the same policy
(--allow 'mcp__fs__*', --approve all; by default a person is asked), its result
kept, a local server run in the sandbox with the workspace observed.`,
	}
	cmd.AddCommand(a.mcpListCmd(), a.mcpPromptsCmd(), a.mcpServeCmd(), a.mcpLoginCmd(), a.mcpLogoutCmd())
	return cmd
}

func (a *app) mcpListCmd() *cobra.Command {
	var f driveFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Start or reach the settings' MCP servers and show each: its status and the tools the model is offered",
		Long: `Start (a local server, in the sandbox) or reach (a remote one) every MCP server of
the settings file's "mcpServers", list its tools, and show for each tool the name
the model calls it by, whether a call asks a person (ask) or runs as read-only
(a trusted server's readOnlyHint), and for each server its status: connected,
or failed and why. Exit 1 when a server failed.`,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			p, err := a.place()
			if err != nil {
				return err
			}
			// The servers of the merged settings: an untrusted file's are
			// left out, never started or reached (harness trust).
			s, err := a.newSession(p, &f, driving(ctx))
			if err != nil {
				return err
			}
			defer s.Close()
			st := s.Stock
			var status []mcp.Status
			if st.MCP != nil {
				status = st.MCP.Status()
			}
			failed := tell.MCPFailed(status)
			if a.jsonOut() {
				if err := a.printJSON(tell.MCPServerDocs(status)); err != nil {
					return err
				}
			} else {
				tell.MCPServers(a.stdout, status, a.layered.Untrusted(), p.SettingsFile(), a.paint)
			}
			if failed > 0 {
				return &exitErr{code: exitError, err: fmt.Errorf("%d of %d MCP servers could not be used", failed, len(status))}
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&f.sandbox, "sandbox", "", "where local servers run: workspace-write (the default, or the settings file's \"sandbox\"), read-only, or off")
	addMCPNetworkFlag(cmd.Flags(), &f.network.On)
	return cmd
}

func (a *app) mcpServeCmd() *cobra.Command {
	var f driveFlags
	var clientApproves bool
	var httpAddr string
	cmd := &cobra.Command{
		Use:   "serve [--http HOST:PORT]",
		Short: "Speak MCP on stdin and stdout: let another agent start, read, answer, resume and verify this workspace's threads",
		Long: `Serve this workspace's threads over MCP on stdin and stdout, for another agent
(Claude Code, Codex) to delegate durable, audited work to harness. Its tools:

  start    start a thread with a task and run it until it is done or waits
  view     where a thread stands; each open request with the digest of its call
  facts    a thread's facts, as JSON
  answer   answer an open request (an approval names the call's digest), then run on
  resume   run a thread on
  replay   tell a thread's record back and verify its log
  plan     switch a thread's plan mode on (it proposes, writes nothing) or off
  stop     stop a thread: a command it runs now is cut off and recorded

Each thread is also a resource, harness://threads/ID (its state) and
harness://threads/ID/facts (its facts, paged); a client subscribed to one is
told of each fact any process appends. Prompts: run_task, review_request,
summarise_thread.

Threads run under the workspace's approval policy (the settings file's, and
--approve, --allow, --deny); nothing else is approved on the client's behalf.
An approval through answer must name the digest of the exact call, and is
refused unless --client-approves says the client's answers are a person's (a
client that asks its person before each answer, as Claude Code does unless told
otherwise); without it a person approves at a terminal (harness approve) while
the client waits, and the client may still deny calls and answer questions.
The store is opened for each request and closed after it.

On stdio a malformed line is answered (-32700, -32600) and the server goes on;
only the end of its input ends it. With --http HOST:PORT it serves streamable
HTTP at /mcp instead, with a fresh token naming you (and the settings' serve
tokens), printed on start: sent as "Authorization: Bearer TOKEN", or as
?token=TOKEN in the address; a post from another origin is refused.

Add it to Claude Code:  claude mcp add harness -- harness mcp serve`,
		Args: args(0, 0, "no arguments"),
		RunE: runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			ws, err := a.mcpWorkspace(&f)
			if err != nil {
				return err
			}
			opts := mcpserver.ServerOptions{ClientApproves: clientApproves, Version: version(), PersonAnswers: personAnswers}
			if httpAddr != "" {
				opts.Person = func(req *sdk.CallToolRequest) string {
					if req == nil || req.Extra == nil {
						return ""
					}
					return req.Extra.Header.Get(serve.PersonHeader)
				}
				return a.mcpServeHTTP(ctx, &f, httpAddr, mcpserver.HTTPHandler(ws, opts))
			}
			srv := mcpserver.NewServer(ws, opts)
			err = srv.Run(ctx, &mcpserver.StdioTransport{In: a.stdin, Out: a.stdout})
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}),
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&clientApproves, "client-approves", false, "the client's answers are a person's: let them approve calls and settle open effects")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP at `HOST:PORT` (path /mcp; port 0: any free port) instead of stdio, with the page's tokens")
	return cmd
}

// mcpServeHTTP serves h, the MCP server over streamable HTTP, at addr
// until ctx is done, behind the tokens and Origin rules of harness
// serve's page (serve.ListenMCP): a fresh token naming the person, and
// the settings' serve tokens.
func (a *app) mcpServeHTTP(ctx context.Context, f *driveFlags, addr string, h http.Handler) error {
	p, err := a.place()
	if err != nil {
		return err
	}
	s, err := a.newSession(p, f, stock.SessionOptions{Lenient: true})
	if err != nil {
		return err
	}
	m, err := serve.ListenMCP(addr, a.whoami(), s.Settings(), h)
	s.Close()
	if errors.Is(err, serve.ErrListen) {
		return usageError("--http %s: %v", addr, strings.TrimPrefix(err.Error(), serve.ErrListen.Error()+": "))
	} else if err != nil {
		return err
	}
	if m.Beyond {
		fmt.Fprintf(a.stderr, "harness: serving MCP beyond loopback at %s: anyone who reaches it with a token acts as the person the token names\n", m.Addr)
	}
	if a.jsonOut() {
		a.printJSON(map[string]any{"url": m.URL, "token": m.Token, "pid": os.Getpid(), "workspace": p.Root})
	} else {
		fmt.Fprintf(a.stderr, "%s serving MCP (streamable HTTP) for %s\n", a.paint("bold", "harness:"), present.EscapeLine(p.Root))
		fmt.Fprintf(a.stderr, "    %s\n", m.URL)
		fmt.Fprintf(a.stderr, "    with the header  Authorization: Bearer %s\n", m.Token)
		fmt.Fprintf(a.stderr, "    or, for a client that takes only an address:  %s?token=%s\n", m.URL, m.Token)
	}
	return m.Until(ctx)
}

// mcpWorkspace is this workspace as harness mcp serve opens it for each
// request (mcpserver.Local): the flags f over its settings, a server
// started first when the settings ask for one, and its threads driven as
// the command line drives them, with nobody at a prompt. The store is
// opened per request, and a person's own command may hold it a moment:
// a request waits for it (--wait, else 30s).
func (a *app) mcpWorkspace(f *driveFlags) (*mcpserver.Local, error) {
	if f.maxOutput < 0 {
		return nil, usageError("--max-output-tokens %d: want a number of tokens, or 0 for the provider's default", f.maxOutput)
	}
	flags, err := f.layer()
	if err != nil {
		return nil, err
	}
	schema, err := f.outputOption()
	if err != nil {
		return nil, err
	}
	inner := *a
	inner.stdin, inner.stdout, inner.output, inner.fr = strings.NewReader(""), io.Discard, "json", nil
	if inner.wait == 0 {
		inner.wait = 30 * time.Second
	}
	l := &mcpserver.Local{Front: inner.front(), Flags: flags, Model: f.model, ModelDir: cwdOrEmpty(), ModelOptions: f.modelOptions(),
		Prepare: func(ctx context.Context, s *stock.Session, create bool) error {
			return inner.autoServe(ctx, s.Place, s.Settings(), create)
		},
		OpenStore: func(ctx context.Context, s *stock.Session) error { return inner.openStore(ctx, s) },
		Driver: func(s *stock.Session, m model.Model, spec string) (*stock.Driver, drive.Options, error) {
			f := *f
			f.model, f.loaded = spec, m
			d, err := inner.newDriver(s, "", s.Approval, &f)
			if err != nil {
				return nil, drive.Options{}, err
			}
			return d.Driver, d.Options(), nil
		}}
	if schema != nil {
		l.Harness = []harness.Option{schema}
	}
	return l, nil
}
