// Package mcp puts the tools of MCP servers through harness's effect
// boundary. (Harness itself as an MCP server is package mcpserver.)
//
// # Tools from MCP servers
//
// Servers are declared as Claude Code declares them in .mcp.json
// ([Servers]: a name, then {command, args, env} for a local server spoken
// to over stdio, or {url, headers} for a remote one over streamable
// HTTP). [Connect] starts or reaches each and lists its tools; each tool
// is offered to the model as mcp__<server>__<tool> with its input schema,
// as a [Tool] ([Client.Tools]) that goes in the runtime's toolbox
// beside the built-in tools. A call of one is an action like any other:
//
//   - action.requested, before anything runs, records the server, its
//     tool, the arguments, the call's digest (the one an approval is bound
//     to) and the digest of the tool's definition as the thread's
//     system.configured offered it (facts.MCPCall);
//   - it is confirmed by the same policy as every tool: by default a
//     person is asked; patterns such as "mcp__github__*" or
//     "mcp__fs__write_file:docs/*" (its "path" argument) answer for them.
//     A server's readOnlyHint lowers a tool to read, asked of nobody, only
//     when the settings say the server is Trusted: hints are the server's
//     word;
//   - the report is the server's result kept whole (facts.MCPResult: its
//     content, structured content and isError; large results as a blob
//     named by digest), and its text is what the model is shown;
//   - a local server runs as a command in the sandbox (package sandbox)
//     with the workspace observer watching, so the effect of its calls is
//     derived from what the runtime observed, as for any command; a
//     remote server's effect is reported — nobody could look — never
//     observed;
//   - a crash of the harness during a call leaves the action in doubt, as
//     any action: it is never called again by itself. A server that dies,
//     does not answer within its timeout, answers with an error or a
//     malformed result, or changed its tool list since the thread was
//     offered it (the tool is gone, or its definition differs from the
//     offered one's digest), gets a failed report saying which, with the
//     failure's class (facts.MCPResult.Class); in the last case the call
//     is not made.
//
// The tool list a thread was offered is its system.configured's tools:
// replay knows what the model saw, and each request names the offered
// definition by its digest.
package mcp
