// Package mcpserver is harness as an MCP server, a front end: [NewServer]
// offers harness's threads to another agent over MCP (harness mcp serve
// speaks it on stdio): tools to start a thread, read where it stands and
// its facts, answer what it waits for, resume it, and replay and verify
// its log. Approvals stay with a person: a thread runs under the
// workspace's approval policy only, the server approves nothing on its
// caller's behalf, and an approval posted through it must name the digest
// of the exact call, and is refused unless the server was told its
// client's answers are a person's ([ServerOptions.ClientApproves]).
//
// It speaks protocol revision 2025-11-25 on stdio ([StdioTransport]: a
// connection that answers malformed lines itself and never ends on one)
// or streamable HTTP ([HTTPHandler], for a front end to put behind its
// tokens). It declares what it serves, tools, logging, resources and
// prompts, and nothing else; a thread's facts reach the client as log
// messages while a call appends them, and a call the client cancels is
// interrupted, unanswered, its thread left resumable. Each thread is a
// resource (its state, [ThreadTemplate]; its facts a page at a time,
// [FactsTemplate]), listed a page at a time; a client subscribed to one is
// sent notifications/resources/updated when any process appends to it
// (the workspace's [Peeker]). Its prompts, one per common task, attach
// what a thread holds as data.
//
// [Local] is the workspace of a directory on this machine, opened for
// each request as a command of the command line opens it, and closed
// after: what harness mcp serve serves.
//
// Tools from MCP servers, for harness's own threads, are package mcp.
package mcpserver
