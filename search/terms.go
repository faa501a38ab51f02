package search

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed-7cc7a084/harness/facts"
)

// The prefixes of the index's terms: one per field, and termWord for the
// words of the text.
const (
	termAll    = "*"
	termKind   = "k:"
	termThread = "t:"
	termTool   = "tool:"
	termPath   = "p:"
	termBy     = "by:"
	termEffect = "e:"
	termCheck  = "c:"
	termModel  = "m:"
	termWord   = "w:"
)

// Bounds on what is read of a fact: the text is model and command output,
// so it is bounded before it is read.
const (
	// maxTextRead is how much of one string of a payload is read for words.
	maxTextRead = 16 << 10
	// maxWords is the most distinct words a fact is indexed under.
	maxWords = 512
	// maxWordLen is the longest word indexed (longer ones, such as
	// digests, are not words anyone types).
	maxWordLen = 40
	// maxPaths is the most paths one fact or call is indexed under.
	maxPaths = 64
	// maxSources is the most facts whose fields one call carries.
	maxSources = 16
)

// words calls yield with each word of s, case folded: runs of letters and
// digits of 2 to maxWordLen bytes, in the first maxTextRead bytes of s.
func words(s string, yield func(string) bool) {
	if len(s) > maxTextRead {
		s = s[:maxTextRead]
	}
	start := -1
	flush := func(end int) bool {
		if start < 0 {
			return true
		}
		w := s[start:end]
		start = -1
		if len(w) < 2 || len(w) > maxWordLen {
			return true
		}
		return yield(strings.ToLower(w))
	}
	for i, r := range s {
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if start < 0 {
				start = i
			}
			continue
		}
		if !flush(i) {
			return
		}
	}
	flush(len(s))
}

// call is what the indexer carries along one tool call of a thread: the
// fields its facts gave, which each later fact of the call is indexed
// under too (an action.completed under the tool its request named and
// the person who approved it), and the seqs of those facts.
type call struct {
	Tool   []string `json:"tool,omitempty"`
	Paths  []string `json:"paths,omitempty"`
	By     []string `json:"by,omitempty"`
	Effect string   `json:"effect,omitempty"`
	Check  []string `json:"check,omitempty"`
	Src    []uint64 `json:"src,omitempty"`
}

// carry is what the indexer carries along a thread, keyed by name (see
// the package comment's 'x' keys): reads come from load when a name is
// not here yet (the index's own record; nil: none), and what changed is
// in dirty.
type carry struct {
	calls map[string]*call
	links map[string]string
	model *modelOf
	load  func(name string) ([]byte, bool)
	dirty map[string]bool
}

// modelOf is the model a thread was configured with, and where.
type modelOf struct {
	Model string `json:"model"`
	Seq   uint64 `json:"seq"`
}

func newCarry(load func(string) ([]byte, bool)) *carry {
	return &carry{calls: map[string]*call{}, links: map[string]string{}, load: load, dirty: map[string]bool{}}
}

// Names of the carried records.
const (
	nameModel = "m"
	nameCall  = "c"
	nameReq   = "r"
	nameAct   = "a"
	nameTurn  = "t"
)

// modelCall is the call a model's call id names now: the latest turn's
// call of that id, or the id itself when no turn named it ("" for "").
func (c *carry) modelCall(id string) string {
	if id == "" {
		return ""
	}
	if key, ok := c.link(nameTurn + id); ok {
		return key
	}
	return id
}

func (c *carry) getModel() *modelOf {
	if c.model == nil && c.load != nil {
		if b, ok := c.load(nameModel); ok {
			var m modelOf
			if json.Unmarshal(b, &m) == nil {
				c.model = &m
			}
		}
	}
	return c.model
}

func (c *carry) link(name string) (string, bool) {
	if v, ok := c.links[name]; ok {
		return v, true
	}
	if c.load != nil {
		if b, ok := c.load(name); ok {
			c.links[name] = string(b)
			return string(b), true
		}
	}
	return "", false
}

func (c *carry) setLink(name, to string) {
	if old, ok := c.link(name); ok && old == to {
		return
	}
	c.links[name] = to
	c.dirty[name] = true
}

// call returns the call named id, made empty if there is none.
func (c *carry) call(id string) *call {
	name := nameCall + id
	if cl, ok := c.calls[name]; ok {
		return cl
	}
	cl := &call{}
	if c.load != nil {
		if b, ok := c.load(name); ok {
			_ = json.Unmarshal(b, cl)
		}
	}
	c.calls[name] = cl
	return cl
}

// changed marks the call id as written.
func (c *carry) changed(id string) { c.dirty[nameCall+id] = true }

// records yields each changed record's name and value.
func (c *carry) records(yield func(name string, value []byte) bool) {
	names := make([]string, 0, len(c.dirty))
	for n := range c.dirty {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var v []byte
		switch {
		case n == nameModel:
			v, _ = json.Marshal(c.model)
		case strings.HasPrefix(n, nameCall):
			v, _ = json.Marshal(c.calls[n])
		default:
			v = []byte(c.links[n])
		}
		if !yield(n, v) {
			return
		}
	}
}

// addTo adds v to set (once; nothing empty, nothing past max).
func addTo(set []string, max int, vs ...string) []string {
	for _, v := range vs {
		if v != "" && len(set) < max && !slices.Contains(set, v) {
			set = append(set, v)
		}
	}
	return set
}

// posting is what the index keeps of one fact: its terms and the seqs of
// the other facts that gave it fields.
type posting struct {
	terms []string
	src   []uint64
}

// index reads the fact f of a thread, in order after the facts c carries
// the fields of, and returns its terms and sources, carrying along what
// later facts need. The same facts in the same order give the same terms:
// that is how a hit is checked against the log (see Index.confirm).
func (c *carry) index(f facts.Fact) posting {
	var p posting
	set := map[string]bool{}
	add := func(ts ...string) {
		for _, t := range ts {
			if t == "" || len(t) > maxValue+8 || strings.IndexByte(t, 0) >= 0 || set[t] {
				continue
			}
			set[t] = true
			p.terms = append(p.terms, t)
		}
	}
	add(termAll, termKind+string(f.Kind), termThread+f.Thread)
	if kind, _, ok := strings.Cut(string(f.Kind), "."); ok {
		add(termKind + kind)
	}
	n := 0
	textOf(f.Data, func(s string) bool {
		words(s, func(w string) bool {
			if !set[termWord+w] {
				add(termWord + w)
				n++
			}
			return n < maxWords
		})
		return n < maxWords
	})
	paths := func(ps ...string) []string {
		var out []string
		for _, p := range ps {
			out = addTo(out, maxPaths, pathTerms(p)...)
		}
		return out
	}
	var cl *call
	// into makes the fact a fact of the call id, and gives the call what
	// the fact says.
	into := func(key string, give func(*call)) {
		cl = c.call(key)
		if len(cl.Src) >= maxSources {
			return
		}
		give(cl)
		cl.Src = append(cl.Src, f.Seq)
		c.changed(key)
	}
	actionCall := func(action string) string {
		if key, ok := c.link(nameAct + action); ok {
			return key
		}
		return "action/" + action
	}
	switch f.Kind {
	case facts.KindSystemConfigured:
		if p, err := facts.Decode[facts.SystemConfigured](f); err == nil && p.Model != "" {
			c.model = &modelOf{Model: p.Model, Seq: f.Seq}
			c.dirty[nameModel] = true
		}
	case facts.KindModelTurn:
		if p, err := facts.Decode[facts.ModelTurn](f); err == nil {
			for _, tc := range p.ToolCalls {
				add(termTool + tc.Name)
				ps := paths(argPaths(tc.Args)...)
				for _, pt := range ps {
					add(termPath + pt)
				}
				if tc.ID != "" {
					// A model may name a call as it named one in an
					// earlier turn (call_1 every turn): the call is this
					// turn's, and the id names it until the next turn.
					key := "turn" + strconv.FormatUint(f.Seq, 10) + "/" + tc.ID
					c.setLink(nameTurn+tc.ID, key)
					cl := c.call(key)
					if len(cl.Src) < maxSources && !slices.Contains(cl.Src, f.Seq) {
						cl.Tool = addTo(cl.Tool, 4, tc.Name)
						cl.Paths = addTo(cl.Paths, maxPaths, ps...)
						cl.Src = append(cl.Src, f.Seq)
						c.changed(key)
					}
				}
			}
		}
	case facts.KindConfirmationRequested:
		if p, err := facts.Decode[facts.ConfirmationRequested](f); err == nil {
			// A confirmation names the action it asks about (its call_id is
			// the action's id); one that names a model's call, that call.
			key, ok := c.link(nameAct + p.CallID)
			if !ok {
				key = c.modelCall(p.CallID)
			}
			if key == "" {
				key = "request/" + p.RequestID
			}
			c.setLink(nameReq+p.RequestID, key)
			into(key, func(cl *call) {
				cl.Tool = addTo(cl.Tool, 4, p.Tool)
				cl.Paths = addTo(cl.Paths, maxPaths, paths(argPaths(p.Args)...)...)
			})
		}
	case facts.KindConfirmationAnswered:
		if p, err := facts.Decode[facts.ConfirmationAnswered](f); err == nil {
			add(termBy + p.By)
			key, ok := c.link(nameReq + p.RequestID)
			if !ok {
				key = "request/" + p.RequestID
			}
			into(key, func(cl *call) { cl.By = addTo(cl.By, 8, p.By) })
		}
	case facts.KindActionRequested:
		if p, err := facts.Decode[facts.ActionRequested](f); err == nil {
			key := c.modelCall(p.CallID)
			if key == "" {
				key = "action/" + p.ActionID
			}
			c.setLink(nameAct+p.ActionID, key)
			into(key, func(cl *call) {
				cl.Tool = addTo(cl.Tool, 4, p.Adapter)
				cl.Paths = addTo(cl.Paths, maxPaths, paths(argPaths(string(p.Payload))...)...)
			})
		}
	case facts.KindActionStarted:
		if p, err := facts.Decode[facts.ActionStarted](f); err == nil {
			into(actionCall(p.ActionID), func(*call) {})
		}
	case facts.KindActionCompleted:
		if p, err := facts.Decode[facts.ActionCompleted](f); err == nil {
			add(termEffect + string(p.EffectState))
			into(actionCall(p.ActionID), func(cl *call) {
				cl.Effect = string(p.EffectState)
				cl.Paths = addTo(cl.Paths, maxPaths, paths(changedPaths(p.Observation.Changed)...)...)
			})
		}
	case facts.KindActionInterrupted:
		if p, err := facts.Decode[facts.ActionInterrupted](f); err == nil {
			into(actionCall(p.ActionID), func(cl *call) {
				cl.Paths = addTo(cl.Paths, maxPaths, paths(changedPaths(p.Changed)...)...)
			})
		}
	case facts.KindCheckRecorded:
		if p, err := facts.Decode[facts.CheckRecorded](f); err == nil {
			add(termCheck+string(p.Verdict), termCheck+p.Check.Name)
			into(actionCall(p.ActionID), func(cl *call) {
				cl.Check = addTo(cl.Check, 8, string(p.Verdict), p.Check.Name)
			})
		}
	case facts.KindEffectReconciled:
		if p, err := facts.Decode[facts.EffectReconciled](f); err == nil {
			add(termBy + p.By)
			into(actionCall(p.ActionID), func(cl *call) { cl.By = addTo(cl.By, 8, p.By) })
		}
	case facts.KindWorkspaceChanged:
		if p, err := facts.Decode[facts.WorkspaceChanged](f); err == nil {
			for _, pt := range paths(changedPaths(p.Changed)...) {
				add(termPath + pt)
			}
		}
	case facts.KindWorkspaceRestored:
		if p, err := facts.Decode[facts.WorkspaceRestored](f); err == nil {
			add(termBy + p.By)
			for _, pt := range paths(changedPaths(p.Restored)...) {
				add(termPath + pt)
			}
		}
	default:
		// Every other kind that says who: question.answered, policy.set,
		// context.bounds_set, thread.stopped.
		if by := byOf(f.Data); by != "" {
			add(termBy + by)
		}
	}
	if cl != nil {
		for _, t := range cl.Tool {
			add(termTool + t)
		}
		for _, pt := range cl.Paths {
			add(termPath + pt)
		}
		for _, b := range cl.By {
			add(termBy + b)
		}
		for _, v := range cl.Check {
			add(termCheck + v)
		}
		if cl.Effect != "" {
			add(termEffect + cl.Effect)
		}
		for _, s := range cl.Src {
			if s != f.Seq {
				p.src = append(p.src, s)
			}
		}
	}
	if m := c.getModel(); m != nil {
		add(termModel + m.Model)
		if _, name, ok := strings.Cut(m.Model, ":"); ok {
			add(termModel + name)
		}
		if m.Seq != f.Seq {
			p.src = append(p.src, m.Seq)
		}
	}
	slices.Sort(p.src)
	p.src = slices.Compact(p.src)
	return p
}

// pathTerms are the terms a path is found by: the path, its base name and
// each directory above it.
func pathTerms(p string) []string {
	p = cleanPath(p)
	if p == "" || p == "." {
		return nil
	}
	out := []string{p}
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		out = append(out, p[i+1:])
		for d := p[:i]; d != ""; {
			out = append(out, d)
			j := strings.LastIndexByte(d, '/')
			if j < 0 {
				break
			}
			d = d[:j]
		}
	}
	return out
}

// pathKeys are the argument names that hold a path.
var pathKeys = []string{"path", "file", "file_path", "filename", "dir", "directory"}

// argPaths are the paths named in a tool call's arguments (a JSON
// object; anything else names none).
func argPaths(args string) []string {
	if len(args) > 1<<20 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(args), &m) != nil {
		return nil
	}
	var out []string
	for _, k := range pathKeys {
		if s, ok := m[k].(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func changedPaths(cs []facts.PathChange) []string {
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		out = append(out, c.Path)
	}
	return out
}

// byOf is the "by" of a payload, if it has one.
func byOf(data []byte) string {
	var v struct {
		By string `msgpack:"by"`
	}
	if msgpack.Unmarshal(data, &v) != nil {
		return ""
	}
	return v.By
}

// textOf calls yield with each string of a payload, its map keys in
// order (so that which words fit under maxWords does not depend on map
// order), until yield returns false.
func textOf(data []byte, yield func(string) bool) {
	var v any
	if msgpack.Unmarshal(data, &v) != nil {
		return
	}
	var walk func(v any, depth int) bool
	walk = func(v any, depth int) bool {
		if depth > 16 {
			return true
		}
		switch x := v.(type) {
		case string:
			return yield(x)
		case []any:
			for _, e := range x {
				if !walk(e, depth+1) {
					return false
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if !walk(x[k], depth+1) {
					return false
				}
			}
		}
		return true
	}
	walk(v, 0)
}
