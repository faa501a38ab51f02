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
// Tools from MCP servers, for harness's own threads, are package mcp.
package mcpserver
