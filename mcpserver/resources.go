package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/thread"
)

// The resources: each thread's state, and its facts a page at a time.
const (
	// ThreadTemplate is a thread's state document, the one every front
	// end gives (drive.State, as GET /api/threads/{id}/state serves it).
	ThreadTemplate = "harness://threads/{id}"
	// FactsTemplate is a page of a thread's facts, in order: those after
	// seq after (default 0), at most limit of them (default and most
	// FactsPage) and at most FactsBytes of JSON. The page's next names
	// the URI of the next page ("" when there is none).
	FactsTemplate = "harness://threads/{id}/facts{?after,limit}"

	// FactsPage is the most facts a page of the facts resource holds.
	FactsPage = 500
	// FactsBytes bounds the JSON of a page of facts: a page holds fewer
	// facts when they are large (one at least).
	FactsBytes = 1 << 20
	// ThreadsPage is the most threads one resources/list answer holds;
	// its nextCursor gives the next page.
	ThreadsPage = 100
)

// ThreadURI is the URI of thread id's state resource.
func ThreadURI(id string) string { return "harness://threads/" + id }

// FactsURI is the URI of the page of thread id's facts after seq after.
func FactsURI(id string, after uint64) string {
	if after == 0 {
		return ThreadURI(id) + "/facts"
	}
	return ThreadURI(id) + "/facts?after=" + strconv.FormatUint(after, 10)
}

// FactsPageView is a page of the facts resource.
type FactsPageView struct {
	Thread string       `json:"thread"`
	Facts  []facts.Fact `json:"facts"`
	// Next is the URI of the next page, "" when this one ends the log
	// (as it stands now).
	Next string `json:"next,omitempty"`
}

// resourceURI is a parsed resource URI.
type resourceURI struct {
	thread string
	facts  bool
	after  uint64
	limit  int
}

// notFound is the error for a resource that is not there: the
// resource-not-found error of the spec (-32602, the URI in its data),
// saying why.
func notFound(uri, why string) error {
	return &jsonrpc.Error{Code: sdk.CodeResourceNotFound, Message: "Resource not found: " + why,
		Data: json.RawMessage(fmt.Sprintf(`{"uri":%q}`, uri))}
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// parseResource parses a resource URI of this server.
func parseResource(raw string) (resourceURI, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "harness" || u.Host != "threads" || u.User != nil || u.Fragment != "" || u.RawPath != "" {
		return resourceURI{}, notFound(raw, "not a harness://threads/ID resource")
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	r := resourceURI{thread: parts[0]}
	switch {
	case len(parts) == 1:
	case len(parts) == 2 && parts[1] == "facts":
		r.facts = true
	default:
		return r, notFound(raw, "not a harness://threads/ID or harness://threads/ID/facts resource")
	}
	if err := thread.ValidateID(r.thread); err != nil {
		return r, notFound(raw, err.Error())
	}
	q := u.Query()
	if !r.facts && u.RawQuery != "" {
		return r, notFound(raw, "a thread's state takes no query")
	}
	for k := range q {
		if k != "after" && k != "limit" {
			return r, invalidParams("%s: unknown query %q (after, limit)", raw, k)
		}
	}
	if v := q.Get("after"); v != "" {
		if r.after, err = strconv.ParseUint(v, 10, 64); err != nil {
			return r, invalidParams("%s: after=%q: want a seq", raw, v)
		}
	}
	r.limit = FactsPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return r, invalidParams("%s: limit=%q: want a number from 1", raw, v)
		}
		r.limit = min(n, FactsPage)
	}
	return r, nil
}

// openThread opens the workspace for a read of thread id: not found
// (the resource-not-found error for uri) when there is no such thread.
func (s *server) openThread(ctx context.Context, uri, id string) (*Opened, uint64, error) {
	o, err := s.ws.Open(ctx, OpenRequest{})
	if errors.Is(err, stock.ErrNoStore) {
		return nil, 0, notFound(uri, fmt.Sprintf("no thread %q: this workspace has no threads", id))
	}
	if err != nil {
		return nil, 0, err
	}
	h, err := o.Runtime.Store.Head(ctx, id)
	if errors.Is(err, thread.ErrNotFound) {
		o.Close()
		return nil, 0, notFound(uri, fmt.Sprintf("no thread %q", id))
	}
	if err != nil {
		o.Close()
		return nil, 0, fmt.Errorf("thread %q: %w", id, err)
	}
	return o, h.Seq, nil
}

// readResource reads a thread's state or a page of its facts.
func (s *server) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	uri := req.Params.URI
	r, err := parseResource(uri)
	if err != nil {
		return nil, err
	}
	o, _, err := s.openThread(ctx, uri, r.thread)
	if err != nil {
		return nil, err
	}
	defer o.Close()
	var v any
	if r.facts {
		v, err = factsPage(ctx, o, r.thread, r.after, r.limit)
	} else {
		v, err = s.stateOf(ctx, o, r.thread)
	}
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// stateOf is thread id's state, as GET /api/threads/{id}/state gives it:
// drive.Inspect's, with the preview of each call to confirm when it
// works in this workspace.
func (s *server) stateOf(ctx context.Context, o *Opened, id string) (drive.State, error) {
	st, err := drive.Inspect(ctx, openRead(ctx, o, id))
	if err != nil {
		return drive.State{}, err
	}
	return viewOf(o, st).State, nil
}

// openRead is thread id to read, as the HTTP API reads it: a child as
// its tree's actor folds it (harness.Runtime.Open), else by o's actor.
func openRead(ctx context.Context, o *Opened, id string) *harness.Thread {
	if th, err := o.Runtime.Open(ctx, o.Actor, id); err == nil {
		return th
	}
	return o.Runtime.Thread(o.Actor, id)
}

// factsPage is the page of thread id's facts after seq after: at most
// limit facts and FactsBytes of JSON (one fact at least).
func factsPage(ctx context.Context, o *Opened, id string, after uint64, limit int) (FactsPageView, error) {
	p := FactsPageView{Thread: id, Facts: []facts.Fact{}}
	size := 0
	for f, err := range o.Runtime.Store.Read(ctx, id, after+1) {
		if err != nil {
			return p, err
		}
		b, err := json.Marshal(f)
		if err != nil {
			return p, err
		}
		if len(p.Facts) == limit || len(p.Facts) > 0 && size+len(b) > FactsBytes {
			p.Next = FactsURI(id, p.Facts[len(p.Facts)-1].Seq)
			if limit != FactsPage {
				p.Next += "&limit=" + strconv.Itoa(limit)
			}
			break
		}
		size += len(b)
		p.Facts = append(p.Facts, f)
	}
	return p, nil
}

// listResources answers resources/list: the threads, a page of
// ThreadsPage at a time, each as its state resource. The cursor is
// opaque to the client: the id of the last thread of the page before.
func (s *server) listResources(ctx context.Context, req *sdk.ListResourcesRequest) (*sdk.ListResourcesResult, error) {
	after := ""
	if req.Params != nil && req.Params.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.Params.Cursor)
		if err == nil {
			err = thread.ValidateID(string(b))
		}
		if err != nil {
			return nil, invalidParams("cursor %q: %v", present.Clip(req.Params.Cursor, 64), ErrBadCursor)
		}
		after = string(b)
	}
	res := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}}
	o, err := s.ws.Open(ctx, OpenRequest{})
	if errors.Is(err, stock.ErrNoStore) {
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	defer o.Close()
	states, next, err := drive.List(ctx, o.Runtime, o.Actor, drive.ListOptions{After: after, Limit: ThreadsPage})
	if err != nil {
		return nil, err
	}
	for _, st := range states {
		desc := string(st.Status) + " thread"
		if st.Unreadable != "" {
			desc = "unreadable thread: " + st.Unreadable
		}
		res.Resources = append(res.Resources, &sdk.Resource{
			URI: ThreadURI(st.Thread), Name: st.Thread, MIMEType: "application/json",
			// The title is what someone (a person, or a model for a
			// child) asked: shown escaped and clipped, as data.
			Title:       present.Clip(present.EscapeLine(st.Title), 120),
			Description: desc,
		})
	}
	if next != "" {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(next))
	}
	return res, nil
}

// subscribe subscribes the session to a thread's state or facts
// resource: an unknown thread is the resource-not-found error.
func (s *server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	r, err := parseResource(uri)
	if err != nil {
		return err
	}
	o, head, err := s.openThread(ctx, uri, r.thread)
	if err != nil {
		return err
	}
	o.Close()
	return s.watch.subscribe(req.Session, uri, r.thread, head)
}

func (s *server) unsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	s.watch.unsubscribe(req.Session, req.Params.URI)
	return nil
}
