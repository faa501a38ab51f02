package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
)

// mcpPromptFlags are run's --mcp-prompt SERVER/PROMPT and --arg K=V: the
// thread starts with an MCP server's prompt instead of a PROMPT.
type mcpPromptFlags struct {
	spec string
	args []string
	// msg is the prompt got, once the session's servers are connected.
	msg *facts.UserMessage
}

func (p *mcpPromptFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&p.spec, "mcp-prompt", "", "start with an MCP server's prompt (SERVER/PROMPT, as harness mcp prompts lists them) instead of a PROMPT; its text is shown before it is sent")
	cmd.Flags().StringArrayVar(&p.args, "arg", nil, "an argument of the --mcp-prompt prompt, NAME=VALUE (repeatable)")
}

// positional checks run's arguments: a PROMPT, or none with --mcp-prompt.
func (p *mcpPromptFlags) positional(cmd *cobra.Command, args []string) error {
	if p.spec == "" {
		if len(p.args) > 0 {
			return usageError("--arg goes with --mcp-prompt")
		}
		return argsN(cmd, args, 1, -1, "a PROMPT")
	}
	if len(args) > 0 {
		return usageError("--mcp-prompt %s: the prompt is the server's; give no PROMPT", present.EscapeLine(p.spec))
	}
	return nil
}

// parsed is the server, the prompt and the arguments the flags name
// (mcp.ParsePromptRef).
func (p *mcpPromptFlags) parsed() (server, name string, args map[string]string, err error) {
	server, name, args, err = mcp.ParsePromptRef(p.spec, p.args)
	switch {
	case errors.Is(err, mcp.ErrPromptRef):
		return "", "", nil, usageError("--mcp-prompt %v (harness mcp prompts lists them)", err)
	case err != nil:
		return "", "", nil, usageError("--arg %v", err)
	}
	return server, name, args, nil
}

// mcpPromptMessage gets the prompt the flags name from the session's
// servers (only those its settings name; an untrusted file's after
// harness trust) and shows its text, escaped, before the thread starts
// with it. Nothing to do without --mcp-prompt.
func (a *app) mcpPromptMessage(ctx context.Context, s *stock.Session, p *mcpPromptFlags) error {
	if p.spec == "" {
		return nil
	}
	server, name, args, err := p.parsed()
	if err != nil {
		return err
	}
	if s.Stock.MCP == nil {
		return usageError("--mcp-prompt: no MCP servers are connected (harness mcp list)")
	}
	m, err := s.Stock.MCP.Prompt(ctx, server, name, args)
	if err != nil {
		return asUsage(fmt.Errorf("--mcp-prompt: %w", err))
	}
	a.printf("%s the prompt %s of the MCP server %s (its words, sent as your message):\n", a.paint("bold", "harness:"), present.EscapeLine(name), present.EscapeLine(server))
	for _, line := range strings.Split(m.Text, "\n") {
		a.printf("    %s\n", present.EscapeLine(line))
	}
	p.msg = &m
	return nil
}

func (a *app) mcpPromptsCmd() *cobra.Command {
	var f driveFlags
	cmd := &cobra.Command{
		Use:   "prompts [SERVER]",
		Short: "List the prompts the settings' MCP servers offer (start a thread with one: harness run --mcp-prompt SERVER/PROMPT)",
		Long: `Start or reach the settings' MCP servers (as harness mcp list does: an untrusted
project file's servers only after harness trust) and list the prompts of those
that offer some, or of SERVER only: each prompt's name, its arguments (* is
required) and the server's description of it, escaped. Start a thread with one:

  harness run --mcp-prompt SERVER/PROMPT --arg NAME=VALUE`,
		Args: args(0, 1, "at most a SERVER"),
		RunE: runE(func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			p, err := a.place()
			if err != nil {
				return err
			}
			s, err := a.newSession(p, &f, driving(ctx))
			if err != nil {
				return err
			}
			defer s.Close()
			server := ""
			if len(args) == 1 {
				server = args[0]
			}
			var prompts []mcp.PromptInfo
			if s.Stock.MCP != nil {
				if prompts, err = s.Stock.MCP.Prompts(ctx, server); err != nil {
					return err
				}
			} else if server != "" {
				return fmt.Errorf("%q: %w", present.EscapeLine(server), mcp.ErrNoPrompts)
			}
			if prompts == nil {
				prompts = []mcp.PromptInfo{}
			}
			if a.jsonOut() {
				return a.printJSON(prompts)
			}
			tell.MCPPrompts(a.textWriter(), prompts, a.paint)
			return nil
		}),
	}
	cmd.Flags().StringVar(&f.sandbox, "sandbox", "", "where local servers run: workspace-write (the default, or the settings file's \"sandbox\"), read-only, or off")
	addMCPNetworkFlag(cmd.Flags(), &f.network.On)
	return cmd
}

// message is the thread's first message: the server's prompt got, else
// the PROMPT given.
func (p *mcpPromptFlags) message(prompt string) facts.UserMessage {
	if p.msg != nil {
		return *p.msg
	}
	return facts.UserMessage{Text: prompt}
}
