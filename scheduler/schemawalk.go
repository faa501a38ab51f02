package scheduler

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// schemaWalk checks a schema document before the library reads it: what
// the drafts' meta-schemas require of each keyword that the library does
// not check itself, the numbers (see CompiledSchema), and, once the whole
// document is seen, that no chain of references loops without descending
// into the document checked (which would recurse without end).
type schemaWalk struct {
	draft string
	c     *CompiledSchema
	root  *url.URL
	// byURI: the schema object at a pointer, by its URI (no fragment);
	// anchors: by URI#anchor; dynamic: the pointers of each
	// $dynamicAnchor name.
	byURI   map[string]string
	anchors map[string]string
	dynamic map[string][]string
	objects map[string]map[string]any
	// same are the schemas each schema applies to the same place in the
	// document (applicators that do not descend); refs the references
	// to resolve into more of them once all is seen.
	same map[string][]string
	refs []schemaRef
}

// schemaRef is a $ref (or $dynamicRef) of the schema at from.
type schemaRef struct {
	from, ref string
	base      *url.URL
	dynamic   bool
}

func newSchemaWalk(draft string, c *CompiledSchema) *schemaWalk {
	root, _ := url.Parse(schemaBase)
	return &schemaWalk{
		draft: draft, c: c, root: root,
		byURI: map[string]string{}, anchors: map[string]string{}, dynamic: map[string][]string{},
		objects: map[string]map[string]any{}, same: map[string][]string{},
	}
}

// Keywords whose values are schemas, in the drafts harness reads.
var (
	subschema = map[string]bool{
		"not": true, "if": true, "then": true, "else": true, "contains": true,
		"additionalProperties": true, "unevaluatedProperties": true, "unevaluatedItems": true,
		"propertyNames": true, "contentSchema": true, "additionalItems": true, "items": true,
	}
	subschemaList = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true}
	subschemaMap  = map[string]bool{
		"properties": true, "patternProperties": true, "$defs": true, "definitions": true,
		"dependentSchemas": true, "dependencies": true,
	}
	// inPlace: keywords whose schemas apply to the same place in the
	// document.
	inPlace = map[string]bool{
		"allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
		"dependentSchemas": true, "dependencies": true,
	}
	comparing = map[string]bool{
		"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
		"multipleOf": true, "const": true, "enum": true, "uniqueItems": true,
	}
	counts = map[string]bool{
		"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
		"minProperties": true, "maxProperties": true, "minContains": true, "maxContains": true,
	}
	typeNames = map[string]bool{
		"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true,
	}
	anchorName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][-A-Za-z0-9._]*$`) })
)

// schema checks the schema v at the JSON pointer at, whose base URI is
// base.
func (w *schemaWalk) schema(v any, at string, base *url.URL) error {
	if _, ok := v.(bool); ok {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("at %s: %w: a schema is an object or a boolean", pointer(at), ErrSchemaShape)
	}
	w.objects[at] = obj
	_, hasRef := obj["$ref"]
	if id, ok := obj["$id"].(string); ok && !(w.draft == draft07 && hasRef) {
		u, err := base.Parse(id)
		if err != nil {
			return fmt.Errorf("at %s/$id: %w: %v", pointer(at), ErrSchemaShape, err)
		}
		frag := u.Fragment
		u.Fragment = ""
		if frag != "" && w.draft == draft07 {
			w.anchors[u.String()+"#"+frag] = at // draft-07 names a place with $id "#name"
		} else if frag != "" {
			return fmt.Errorf("at %s/$id: %w: an $id with a fragment", pointer(at), ErrSchemaShape)
		}
		if _, dup := w.byURI[u.String()]; dup && frag == "" {
			return fmt.Errorf("at %s/$id: %w: %s is the $id of two schemas", pointer(at), ErrSchemaShape, short(u.String()))
		}
		if frag == "" {
			base = u
			w.byURI[u.String()] = at
		}
	}
	if at == "" {
		w.byURI[base.String()] = at
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first error is the same every time
	for _, k := range keys {
		if err := w.keyword(obj, k, at, base); err != nil {
			return err
		}
	}
	return nil
}

// keyword checks the keyword k of the schema obj at at.
func (w *schemaWalk) keyword(obj map[string]any, k, at string, base *url.URL) error {
	e := obj[k]
	here := at + "/" + escapePointer(k)
	bad := func(why string) error {
		return fmt.Errorf("at %s: %w: %s", pointer(here), ErrSchemaShape, why)
	}
	if comparing[k] {
		w.c.compares = true
	}
	switch {
	case k == "$schema" && at != "":
		if s, _ := e.(string); s != "" {
			if d, err := schemaDraft(s); err != nil || d != w.draft {
				return fmt.Errorf("at %s: %w: a subschema of another draft (%q)", pointer(here), ErrSchemaDraft, short(s))
			}
		}
	case k == "format" && w.draft == draft07:
		return fmt.Errorf("at %s: %w: draft-07 asserts \"format\", which harness does not check; declare draft 2020-12 (where it is a note) or leave it out", pointer(here), ErrSchemaDraft)
	case k == "multipleOf":
		n, ok := e.(json.Number)
		if !ok {
			return bad("multipleOf is a number")
		}
		r := readNumber(string(n))
		if r.exact && !r.integer {
			return fmt.Errorf("at %s: %w: multipleOf %s is not a whole number (harness checks multiples of whole numbers only)", pointer(here), ErrInexactNumber, shortNumber(string(n)))
		}
		if r.f <= 0 {
			return bad("multipleOf is greater than 0")
		}
	case counts[k]:
		n, ok := e.(json.Number)
		if r := readNumber(string(n)); !ok || !r.integer || r.f < 0 {
			return bad(k + " is a whole number, 0 or more")
		}
	case k == "type":
		names, ok := e.([]any)
		if !ok {
			names = []any{e}
		}
		seen := map[string]bool{}
		for _, t := range names {
			s, _ := t.(string)
			if !typeNames[s] || seen[s] {
				return bad("type is one of null, boolean, object, array, number, string, integer, or a list of them without repeats")
			}
			seen[s] = true
			w.c.integers = w.c.integers || s == "integer"
		}
	case k == "required":
		l, ok := e.([]any)
		if !ok || !uniqueStrings(l) {
			return bad("required is a list of names without repeats")
		}
	case k == "dependentRequired":
		m, ok := e.(map[string]any)
		if !ok {
			return bad("dependentRequired is an object of lists of names")
		}
		for _, l := range m {
			if l, ok := l.([]any); !ok || !uniqueStrings(l) {
				return bad("dependentRequired is an object of lists of names without repeats")
			}
		}
	case k == "enum":
		if !isList(e) {
			return bad("enum is a list")
		}
	case (k == "allOf" || k == "anyOf" || k == "oneOf" || k == "prefixItems") && (!isList(e) || len(e.([]any)) == 0):
		return bad(k + " is a list of one schema or more")
	case k == "items" && isList(e) && w.draft != draft07:
		return bad("in draft 2020-12 items is one schema (prefixItems is the list)")
	case (k == "$anchor" || k == "$dynamicAnchor") && w.draft != draft07:
		s, ok := e.(string)
		if !ok || !anchorName().MatchString(s) {
			return bad(k + " is a name: a letter or _, then letters, digits, -, _ or .")
		}
		w.anchors[base.String()+"#"+s] = at
		if k == "$dynamicAnchor" {
			w.dynamic[s] = append(w.dynamic[s], at)
		}
	case k == "$ref" || k == "$dynamicRef" && w.draft != draft07:
		s, ok := e.(string)
		if !ok {
			return bad(k + " is a URI reference")
		}
		w.refs = append(w.refs, schemaRef{from: at, ref: s, base: base, dynamic: k == "$dynamicRef"})
	}
	if w.draft == draft07 && k != "$ref" && k != "definitions" && obj["$ref"] != nil {
		// draft-07 ignores what is beside a $ref.
		return w.numbers(e, here)
	}
	switch {
	case subschema[k] && !isList(e):
		if inPlace[k] {
			w.same[at] = append(w.same[at], here)
		}
		return w.schema(e, here, base)
	case subschemaList[k] && isList(e):
		for i, s := range e.([]any) {
			p := here + "/" + strconv.Itoa(i)
			if inPlace[k] {
				w.same[at] = append(w.same[at], p)
			}
			if err := w.schema(s, p, base); err != nil {
				return err
			}
		}
	case subschemaMap[k]:
		m, ok := e.(map[string]any)
		if !ok {
			return bad(k + " is an object of schemas")
		}
		names := make([]string, 0, len(m))
		for name := range m {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			s := m[name]
			p := here + "/" + escapePointer(name)
			if k == "dependencies" && isList(s) {
				if !uniqueStrings(s.([]any)) {
					return bad("dependencies lists names without repeats")
				}
				continue
			}
			if inPlace[k] {
				w.same[at] = append(w.same[at], p)
			}
			if err := w.schema(s, p, base); err != nil {
				return err
			}
		}
	default:
		return w.numbers(e, here)
	}
	return nil
}

// loops refuses a schema in which a chain of references and in-place
// applicators comes back to where it started without descending into
// the document: validating with it would not end.
func (w *schemaWalk) loops() error {
	for _, r := range w.refs {
		w.same[r.from] = append(w.same[r.from], w.targets(r)...)
	}
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var visit func(p string) error
	visit = func(p string) error {
		switch state[p] {
		case open:
			return fmt.Errorf("at %s: %w: its references loop without descending into the document", pointer(p), ErrSchemaShape)
		case done:
			return nil
		}
		state[p] = open
		for _, q := range w.same[p] {
			if err := visit(q); err != nil {
				return err
			}
		}
		state[p] = done
		return nil
	}
	froms := make([]string, 0, len(w.same))
	for p := range w.same {
		froms = append(froms, p)
	}
	slices.Sort(froms)
	for _, p := range froms {
		if err := visit(p); err != nil {
			return err
		}
	}
	return nil
}

// targets are the schemas in this document that r may refer to (a
// reference outside it is the library's to refuse).
func (w *schemaWalk) targets(r schemaRef) []string {
	u, err := r.base.Parse(r.ref)
	if err != nil {
		return nil
	}
	frag := u.Fragment
	u.Fragment = ""
	var out []string
	if r.dynamic && frag != "" && !strings.HasPrefix(frag, "/") {
		out = append(out, w.dynamic[frag]...) // any of them, by the dynamic scope
	}
	if frag == "" || strings.HasPrefix(frag, "/") {
		at, ok := w.byURI[u.String()]
		if !ok {
			return out
		}
		if p, ok := w.follow(at, frag); ok {
			out = append(out, p)
		}
		return out
	}
	if at, ok := w.anchors[u.String()+"#"+frag]; ok {
		out = append(out, at)
	}
	return out
}

// follow is the pointer of the schema the JSON pointer frag names from
// the schema at at.
func (w *schemaWalk) follow(at, frag string) (string, bool) {
	if frag == "" {
		return at, true
	}
	var v any = w.objects[at]
	p := at
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			v = x[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return "", false
			}
			v = x[i]
		default:
			return "", false
		}
		p += "/" + escapePointer(tok)
	}
	if _, ok := w.objects[p]; !ok {
		return "", false // a boolean schema, or not one the walk saw
	}
	return p, true
}

// numbers checks that each number in v (a keyword's value, const, enum,
// default...) is exactly the float64 the library reads it as.
func (w *schemaWalk) numbers(v any, at string) error {
	switch x := v.(type) {
	case json.Number:
		if !readNumber(string(x)).exact {
			return fmt.Errorf("at %s: %w: %s in the schema", pointer(at), ErrInexactNumber, shortNumber(string(x)))
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := w.numbers(x[k], at+"/"+escapePointer(k)); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := w.numbers(e, at+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func uniqueStrings(l []any) bool {
	seen := map[string]bool{}
	for _, x := range l {
		s, ok := x.(string)
		if !ok || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}
