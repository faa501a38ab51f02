package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/facts"
)

// Bounds of what a report holds of a result.
const (
	// InlineResult is the largest result kept on the report itself; a
	// larger one is kept in the store's blobs and named by its digest (or
	// on the report, whole, where no blobs are kept).
	InlineResult = 16 << 10
	// ShownResult bounds the text of a result the model is shown (its
	// first and last halves; the cut is marked).
	ShownResult = 64 << 10
)

// report is the report of a call the server answered: its result kept
// whole, its content as text for the model, and isError as the status.
func (t *tool) report(ctx context.Context, res *sdk.CallToolResult) facts.Report {
	raw, err := json.Marshal(res)
	if err != nil {
		return t.failed(facts.ClassInvalidOutput, "the server's result cannot be encoded again: %v", err)
	}
	kept := &facts.MCPResult{IsError: res.IsError, Size: len(raw)}
	if b := t.c.client.blobStore(); len(raw) > InlineResult && b != nil {
		d, err := b.PutBlob(context.WithoutCancel(ctx), raw)
		if err == nil {
			kept.Blob = d
		}
	}
	if kept.Blob == "" {
		kept.Result = canonical(raw)
	}
	r := facts.Report{Status: facts.StatusSucceeded, Stdout: bound(Text(res), ShownResult), MCP: kept}
	if res.IsError {
		r.Status = facts.StatusFailed
		r.Error = t.name + ": the tool reported an error (isError)"
		if first, _, _ := strings.Cut(strings.TrimSpace(Text(res)), "\n"); first != "" {
			r.Error += ": " + shorten(first, 200)
		}
	}
	return r
}

// Text is a result's content as text: text as it is, each other kind
// named with its type and size (an image's bytes are kept with the
// result, not shown), a resource by its URI and text; the structured
// content as JSON when there is no other.
func Text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link %s %s]", c.URI, c.Name))
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			s := fmt.Sprintf("[resource %s", c.Resource.URI)
			if c.Resource.MIMEType != "" {
				s += " " + c.Resource.MIMEType
			}
			if len(c.Resource.Blob) > 0 {
				s += fmt.Sprintf(", %d bytes", len(c.Resource.Blob))
			}
			s += "]"
			if c.Resource.Text != "" {
				s += "\n" + c.Resource.Text
			}
			parts = append(parts, s)
		default:
			b, _ := json.Marshal(c)
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// bound keeps the first and last halves of s within n bytes, marking the
// cut (made between runes).
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n[… %d bytes cut; the whole result is kept with the report …]\n%s", s[:head], tail-head, s[tail:])
}
