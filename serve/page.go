package serve

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/fold"
	"github.com/seed-7cc7a084/harness/harness"
	"github.com/seed-7cc7a084/harness/present"
	"github.com/seed-7cc7a084/harness/search"
)

// The page's templates, style and script, in the binary.
//
//go:embed assets
var assets embed.FS

// pages is the page's templates, parsed at the first page served, not
// at every start of the program (the command line links this package).
var pages = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"diffLines": diffLines,
		"line":      present.EscapeLine,
		"text":      present.EscapeText,
		"short":     func(s string) string { return shorten(present.EscapeLine(s), 100) },
		"kindClass": func(k facts.Kind) string { return strings.ReplaceAll(string(k), ".", "-") },
		"when":      func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
		"waits":     waitsText,
		"pathEsc":   url.PathEscape,
		"dict":      dict,
		"root":      func() string { return rootMark },
		"ref":       drive.Ref,
		"fields":    drive.ElicitFields,
		"said":      said,
		"sandbox":   present.SandboxDetail,
		"spend":     present.SayBudget,
		"count":     count,
		"command": func(tool, args string) *shownCommand {
			if c, ok := commandOf(tool, args); ok {
				return &c
			}
			return nil
		},
		"projectRule": func(root, tool, args string) string {
			return drive.ProjectAlways(root, tool, args).String()
		},
	}).ParseFS(assets, "assets/*.tmpl"))
})

// dict makes a map of key, value pairs, for a template's argument.
func dict(kv ...any) map[string]any {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := kv[i].(string)
		m[k] = kv[i+1]
	}
	return m
}

// count is present.Plural for the templates, whose counts are ints of
// several types.
func count(n any, one, many string) string {
	switch v := reflect.ValueOf(n); {
	case v.CanInt():
		return present.Plural(v.Int(), one, many)
	case v.CanUint():
		return present.Plural(v.Uint(), one, many)
	}
	return fmt.Sprint(n) + " " + many
}

// shorten cuts s to n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// describe is a fact in one line, for a person.
func describe(f facts.Fact) string { return present.Describe(f) }

// waitsText says what a thread of the list waits for.
func waitsText(t ThreadSummary) string {
	switch {
	case len(t.InDoubt) > 0:
		return "in doubt: " + strings.Join(t.InDoubt, ", ")
	case len(t.Running) > 0:
		return "running: " + strings.Join(t.Running, ", ")
	case len(t.Waits) > 0:
		parts := make([]string, len(t.Waits))
		for i, w := range t.Waits {
			parts[i] = string(w.Kind) + " " + drive.Ref(w)
		}
		return strings.Join(parts, ", ")
	case t.Reason != "":
		return present.EscapeLine(t.Reason)
	}
	return "–"
}

// render writes the template name of data, whole or not at all, as the
// answer to r (see rooted).
func (s *Server) render(w http.ResponseWriter, r *http.Request, name string, data any) error {
	var b bytes.Buffer
	if err := pages().ExecuteTemplate(&b, name, data); err != nil {
		s.opts.Logf("render %s: %v", name, err)
		return err
	}
	_, err := w.Write(rooted(b.Bytes(), r))
	return err
}

// rootMark is what the page's <base href> says until rooted replaces it.
const rootMark = "harness-page-root/"

// rooted is a rendered page with its <base href> (the first rootMark, in
// the page's head, before anything a thread wrote) made the relative
// path from r's page to the server's root: "./" at the root, "../" on a
// thread's page. Every link, form, script and redirect of the pages is
// relative, so that the page works mounted under any path prefix
// (http.StripPrefix): nothing names an absolute path.
func rooted(page []byte, r *http.Request) []byte {
	return bytes.Replace(page, []byte(`<base href="`+rootMark+`">`), []byte(`<base href="`+rootOf(r)+`">`), 1)
}

// rootOf is the relative path from r's page to the server's root.
func rootOf(r *http.Request) string {
	depth := strings.Count(r.URL.EscapedPath(), "/") - 1
	if depth <= 0 {
		return "./"
	}
	return strings.Repeat("../", depth)
}

// seeOther sends the browser to the thread id's page, relative to r's
// page (/t/ID/answer, /t/ID/resume, /t/ID/stop), with query q: a Location
// relative to the request, so that it stays under the prefix the page is
// mounted at. (http.Redirect would make it absolute from the path the
// server sees.)
func seeOther(w http.ResponseWriter, id string, q url.Values) {
	loc := "../" + url.PathEscape(id)
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	w.Header().Set("Location", loc)
	w.WriteHeader(http.StatusSeeOther)
}

// page answers a page: the template name of data, or the error as a page.
func (s *Server) page(h func(http.ResponseWriter, *http.Request) (string, any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w = s.timed(w)
		name, data, err := h(w, r)
		if name == "" && err == nil {
			return // answered already (a redirect)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if err != nil {
			status, _ := statusOf(err)
			if status == http.StatusInternalServerError {
				s.opts.Logf("%s %s: %v", r.Method, r.URL.Path, err)
			}
			w.WriteHeader(status)
			s.render(w, r, "error", map[string]any{"Status": status, "Error": err.Error(), "Who": who(r)})
			return
		}
		var b bytes.Buffer
		if err := pages().ExecuteTemplate(&b, name, data); err != nil {
			s.opts.Logf("render %s: %v", name, err)
			http.Error(w, "the page could not be made", http.StatusInternalServerError)
			return
		}
		w.Write(rooted(b.Bytes(), r))
	})
}

func who(r *http.Request) string {
	id, _ := IdentityOf(r.Context())
	return id.Name
}

func (s *Server) pageRoutes(mux *http.ServeMux) {
	page := func(pattern string, h func(http.ResponseWriter, *http.Request) (string, any, error)) {
		mux.Handle(pattern, s.authenticate(s.page(h)))
	}
	page("GET /{$}", s.listPage)
	page("GET /list", s.listRows)
	page("GET /t/{id}", s.threadPage)
	page("GET /t/{id}/panel", s.panel)
	page("POST /t/{id}/answer", s.pageAnswer)
	page("POST /t/{id}/resume", s.pageResume)
	page("POST /t/{id}/stop", s.pageStop)
	page("GET /t/{id}/undo", s.undoPage)
	page("GET /t/{id}/fork", s.forkPage)
	page("POST /t/{id}/undo", s.pageUndo)
	page("POST /t/{id}/fork", s.pageFork)
	page("GET /search", s.searchPage)
	mux.Handle("GET /events", s.authenticate(s.apiHandler(s.streamList)))
	mux.Handle("GET /t/{id}/events", s.authenticate(s.apiHandler(s.pageEvents)))
	mux.Handle("GET /t/{id}/progress", s.authenticate(s.apiHandler(s.pageProgress)))
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".tmpl") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})))
	page("/", func(w http.ResponseWriter, r *http.Request) (string, any, error) {
		return "", nil, &httpError{status: http.StatusNotFound, code: "not_found", msg: "no page at " + r.URL.Path}
	})
}

// listData is the list page's.
type listData struct {
	Who, Workspace, Where, CSRF string
	Threads                     []ThreadSummary
	After, Next                 string
	// Status is the status the list keeps ("" for all); Statuses those a
	// person may pick.
	Status   harness.Status
	Statuses []harness.Status
}

// listStatuses are the statuses the list filters by.
var listStatuses = []harness.Status{drive.StatusRunning, harness.StatusResumable, harness.StatusParked, harness.StatusDone, harness.StatusFailed, harness.StatusStopped}

// listData is the list page's: a page of threads (of the status asked
// for), the one active last first, as harness threads lists them.
func (s *Server) listData(r *http.Request) (listData, error) {
	q := r.URL.Query()
	after, status := q.Get("after"), harness.Status(q.Get("status"))
	if status != "" && !slices.Contains(listStatuses, status) {
		return listData{}, badRequest("status %q: want one of %v", status, listStatuses)
	}
	list, next, err := s.threads(r.Context(), drive.ListOptions{After: after, Limit: 500, Status: status})
	if err != nil {
		return listData{}, err
	}
	slices.SortStableFunc(list, func(a, b ThreadSummary) int { return b.Head.At.Compare(a.Head.At) })
	id, _ := IdentityOf(r.Context())
	return listData{Who: id.Name, Workspace: s.opts.Stock.Config.Workspace, Where: s.opts.Stock.Place.Where(), CSRF: s.csrf(id.secret),
		Threads: list, After: after, Next: next, Status: status, Statuses: listStatuses}, nil
}

func (s *Server) listPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	d, err := s.listData(r)
	return "list", d, err
}

func (s *Server) listRows(w http.ResponseWriter, r *http.Request) (string, any, error) {
	d, err := s.listData(r)
	return "rows", d, err
}

// searchData is the search page's: the query, and its hits or why it
// does not parse.
type searchData struct {
	Who, Query, Problem string
	Result              drive.SearchResult
}

// searchPage is the page's search box and what it found: a query that
// does not parse is said on the page, under the box.
func (s *Server) searchPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	q := r.URL.Query()
	d := searchData{Who: who(r), Query: q.Get("q")}
	if strings.TrimSpace(d.Query) == "" {
		return "search", d, nil
	}
	res, err := s.search(r.Context(), d.Query, drive.SearchOptions{Cursor: q.Get("page")})
	switch {
	case errors.Is(err, search.ErrQuery), errors.Is(err, search.ErrCursor):
		d.Problem = err.Error()
	case err != nil:
		return "", nil, err
	}
	d.Result = res
	return "search", d, nil
}

// threadData is the thread page's.
type threadData struct {
	D      ThreadDetail
	Replay Replay
	Facts  []factRow
	Who    string
	CSRF   string
	Flash  *flash
	// Root and RuleFile, for a thread of the server's workspace, are the
	// workspace and the person's own file a rule "always, for this
	// project" is kept in (see stock.ScopeWorkspace); RuleFile is "" when
	// none can be kept.
	Root, RuleFile string
	// DefaultTimeout is how long a command may run when its call gives
	// no timeout, in the server's workspace ("" elsewhere).
	DefaultTimeout string
	// Children are the threads the thread delegated to, running or
	// finished (the thread page's, not the panel's).
	Children []ThreadSummary
}

type flash struct {
	Text, Class string
}

// factRow is one fact of the timeline.
type factRow struct {
	Thread string
	Seq    uint64
	Kind   facts.Kind
	Line   string
	At     time.Time
	Cause  string
	Flag   string
}

func rowOf(f facts.Fact) factRow {
	return factRow{Thread: f.Thread, Seq: f.Seq, Kind: f.Kind, Line: describe(f), At: f.At, Cause: f.Cause}
}

// threadData is the thread page's data, with its timeline and actions
// when timeline is set; without them, the panel's (see panel.go): the
// thread's view and its kept verdict, which cost what the view does, not
// the log.
func (s *Server) threadData(r *http.Request, id string, timeline bool) (threadData, error) {
	d, err := s.detailOf(r.Context(), id, timeline)
	if err != nil {
		return threadData{}, err
	}
	var rep Replay
	if timeline {
		rep, err = s.replay(r.Context(), id)
	} else {
		rep.Thread, rep.Status = id, d.Status
		rep.Verified, rep.Verdict, err = s.verdict(r.Context(), id)
	}
	if err != nil {
		return threadData{}, err
	}
	who, _ := IdentityOf(r.Context())
	td := threadData{D: d, Replay: rep, Who: who.Name, CSRF: s.csrf(who.secret)}
	if d.Here {
		td.Root = s.opts.Stock.Place.Root
		td.RuleFile, _ = s.opts.Stock.Place.ProjectRuleFile(os.Getenv)
		if s.opts.Stock.Tools != nil {
			td.DefaultTimeout = strconv.FormatFloat(s.opts.Stock.Tools.Limits().CommandTimeout.Seconds(), 'g', -1, 64) + "s"
		}
	}
	if timeline {
		tree, _, err := s.threads(r.Context(), drive.ListOptions{Root: id})
		if err != nil {
			return threadData{}, err
		}
		for _, c := range tree {
			if c.Parent == id {
				td.Children = append(td.Children, c)
			}
		}
		for _, e := range rep.Entries {
			row := rowOf(e.Fact)
			if e.Action != nil {
				row.Flag = e.Action.Flag
			}
			td.Facts = append(td.Facts, row)
		}
		// The replay read the log after the detail: the page's head is the
		// last fact it shows, so the live stream starts after it.
		if n := len(td.Facts); n > 0 {
			td.D.Head.Seq = td.Facts[n-1].Seq
		}
	}
	return td, nil
}

func (s *Server) threadPage(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	td, err := s.threadData(r, id, true)
	if err != nil {
		return "", nil, err
	}
	q := r.URL.Query()
	td.Flash = rewindFlash(q)
	if seq := q.Get("answered"); seq != "" {
		if n, err := strconv.ParseUint(seq, 10, 64); err == nil {
			td.Flash = &flash{Text: fmt.Sprintf("answered (seq %d)", n), Class: "ok"}
			if q.Get("duplicate") == "1" {
				td.Flash.Text = fmt.Sprintf("already answered (seq %d): nothing appended", n)
			}
		}
	}
	return "thread", td, nil
}

func (s *Server) panel(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	td, err := s.threadData(r, id, false)
	return "panel", td, err
}

// wantsJSON reports whether the post came from the page's script, which
// takes the answer as JSON.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// formAnswer reads the page's answer form.
func formAnswer(r *http.Request) (AnswerRequest, error) {
	f := r.PostForm
	a := AnswerRequest{Kind: fold.WaitKind(f.Get("kind")), RequestID: f.Get("request"), Digest: f.Get("digest"), Reason: f.Get("reason"), Note: f.Get("note"), Decision: f.Get("decision")}
	switch a.Kind {
	case fold.WaitConfirmation:
		switch f.Get("answer") {
		case "approve":
			a.Approved = drive.Yes
			a.Always, a.Project = strings.TrimSpace(f.Get("always")), f.Get("project") == "1"
		case "deny":
			a.Approved = drive.No
		default:
			return a, badRequest("answer %q: want approve or deny", f.Get("answer"))
		}
	case fold.WaitQuestion:
		if e := f.Get("elicit"); e != "" {
			// An MCP server's form: its fields are "field.<name>".
			a.Elicit = e
			for k, v := range f {
				if name, ok := strings.CutPrefix(k, "field."); ok && len(v) > 0 {
					if a.Fields == nil {
						a.Fields = map[string]string{}
					}
					a.Fields[name] = v[len(v)-1]
				}
			}
			if a.Elicit != string(facts.ElicitAccept) {
				a.Fields = nil
			}
			break
		}
		text := f.Get("option")
		if text == "" {
			text = f.Get("text")
		}
		a.Text = text
	case fold.WaitBudget:
		return formBudget(f, a)
	case fold.WaitPlan:
		switch f.Get("answer") {
		case "act":
			a.Approved = drive.Yes
		case "revise":
			a.Text = f.Get("text")
		default:
			return a, badRequest("answer %q: want act or revise", f.Get("answer"))
		}
	}
	return a, nil
}

func (s *Server) pageAnswer(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBody)
	if err := r.ParseForm(); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return "", nil, &httpError{status: http.StatusRequestEntityTooLarge, code: "too_large", msg: fmt.Sprintf("the form is larger than %d bytes", mb.Limit)}
		}
		return "", nil, badRequest("the form does not read: %v", err)
	}
	a, err := formAnswer(r)
	var res AnswerResult
	if err == nil {
		who, _ := IdentityOf(r.Context())
		res, err = s.answer(r.Context(), who, id, a)
	}
	if wantsJSON(r) {
		if err != nil {
			status, code := statusOf(err)
			writeError(w, r, true, status, code, err.Error())
		} else {
			writeJSON(w, http.StatusOK, res)
		}
		return "", nil, nil
	}
	if err != nil {
		return s.pageWithError(r, id, err)
	}
	q := url.Values{"answered": {strconv.FormatUint(res.Seq, 10)}}
	if res.Duplicate {
		q.Set("duplicate", "1")
	}
	seeOther(w, id, q)
	return "", nil, nil
}

// pageWithError is the thread page with what went wrong said at its top.
func (s *Server) pageWithError(r *http.Request, id string, err error) (string, any, error) {
	td, terr := s.threadData(r, id, true)
	if terr != nil {
		return "", nil, err
	}
	td.Flash = &flash{Text: err.Error(), Class: "error"}
	return "thread", td, nil
}

func (s *Server) pageResume(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	err = s.Resume(r.Context(), id)
	if wantsJSON(r) {
		if err != nil {
			status, code := statusOf(err)
			writeError(w, r, true, status, code, err.Error())
		} else {
			writeJSON(w, http.StatusAccepted, map[string]any{"thread": id, "resuming": true})
		}
		return "", nil, nil
	}
	if err != nil {
		return s.pageWithError(r, id, err)
	}
	seeOther(w, id, nil)
	return "", nil, nil
}

// pageStop is the page's Stop: the thread is stopped as the API's stop
// stops it (a command running anywhere is cut off), by the page's
// person.
func (s *Server) pageStop(w http.ResponseWriter, r *http.Request) (string, any, error) {
	id, err := threadID(r)
	if err != nil {
		return "", nil, err
	}
	who, _ := IdentityOf(r.Context())
	st, err := s.stop(r.Context(), who.Name, id, "")
	if wantsJSON(r) {
		if err != nil {
			status, code := statusOf(err)
			writeError(w, r, true, status, code, err.Error())
		} else {
			writeJSON(w, http.StatusOK, map[string]any{"thread": id, "stopped": true, "status": st.Status, "reason": st.Reason})
		}
		return "", nil, nil
	}
	if err != nil {
		return s.pageWithError(r, id, err)
	}
	seeOther(w, id, nil)
	return "", nil, nil
}

// pageEvents is the thread page's live stream: each fact as the
// timeline's row of it and, for a fact of an action, the actions table's
// row of that action (see panel.go).
func (s *Server) pageEvents(w http.ResponseWriter, r *http.Request) error {
	id, err := threadID(r)
	if err != nil {
		return err
	}
	from, err := streamFrom(r)
	if err != nil {
		return err
	}
	return s.streamThread(w, r, id, from, "html", func(f facts.Fact) (string, error) {
		var b bytes.Buffer
		if err := pages().ExecuteTemplate(&b, "fact", rowOf(f)); err != nil {
			return "", err
		}
		ev := map[string]any{"seq": f.Seq, "kind": f.Kind, "html": b.String()}
		if aid, row, ok := s.actionRow(r.Context(), f); ok {
			ev["action"] = map[string]string{"id": aid, "html": row}
		} else if aid, row, ok := s.delegationRow(r.Context(), f); ok {
			ev["action"] = map[string]string{"id": aid, "html": row}
		}
		return jsonLine(ev), nil
	})
}
