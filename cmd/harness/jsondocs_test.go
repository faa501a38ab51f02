package main

import (
	"encoding"
	"encoding/json"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/audit"
	"github.com/seed-7cc7a084/harness/demo"
	"github.com/seed-7cc7a084/harness/drive"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/mcp"
	"github.com/seed-7cc7a084/harness/mcpserver"
	"github.com/seed-7cc7a084/harness/rerun"
	"github.com/seed-7cc7a084/harness/rewind"
	"github.com/seed-7cc7a084/harness/seal"
	"github.com/seed-7cc7a084/harness/search"
	"github.com/seed-7cc7a084/harness/serve"
	"github.com/seed-7cc7a084/harness/stock"
	"github.com/seed-7cc7a084/harness/tell"
	"github.com/seed-7cc7a084/harness/worker"
)

// snakeKey is how a key of a JSON document is spelled (compiled at first
// use: a test file's package variables are the package's init, which
// TestOwnInitsAreLight keeps light).
var snakeKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`) })

// settingsKey reports whether k is a key a document shows as the settings
// file spells it, which is not ours to choose ("mcpServers", as .mcp.json
// has it).
func settingsKey(k string) bool { return k == "mcpServers" }

// jsonKeys reports, for the type t and every type its JSON holds, each
// field whose key is not snake_case — a field without a json tag is
// encoded under its Go name. A type with its own MarshalJSON is checked by
// the keys its zero value encodes to.
func jsonKeys(t reflect.Type, path string, seen map[reflect.Type]bool, bad *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if seen[t] || t.Kind() != reflect.Struct {
		return
	}
	seen[t] = true
	marshaler, texter := reflect.TypeFor[json.Marshaler](), reflect.TypeFor[encoding.TextMarshaler]()
	if t.Implements(texter) || reflect.PointerTo(t).Implements(texter) {
		return // a string
	}
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		b, err := json.Marshal(reflect.New(t).Interface())
		if err != nil {
			return // a zero value it does not encode; its tests cover it
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if !snakeKey().MatchString(k) {
					*bad = append(*bad, path+"."+k+" ("+t.String()+", its MarshalJSON)")
				}
			}
		}
		return
	}
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case f.Anonymous && name == "":
			jsonKeys(f.Type, path, seen, bad) // its fields are promoted
			continue
		case name == "":
			name = f.Name
		}
		if !snakeKey().MatchString(name) && !settingsKey(name) {
			*bad = append(*bad, path+"."+name+" ("+t.String()+"."+f.Name+")")
		}
		jsonKeys(f.Type, path+"."+name, seen, bad)
	}
}

// TestJSONDocumentsAreSnakeCase: every document the command line prints
// with -o json (or -o stream-json), the HTTP API answers and the MCP
// server returns spells its keys in snake_case, however deep — a type
// that reaches JSON without json tags (as audit.Effect and rewind's plan
// once did) fails here, naming the field.
func TestJSONDocumentsAreSnakeCase(t *testing.T) {
	docs := []any{
		// The command line's -o json.
		tell.ErrorDoc{}, []stock.AgentEntry{}, tell.BudgetDoc{}, tell.SettingsDoc{}, demo.Record{}, []tell.MCPServerDoc{},
		[]mcp.PromptInfo{}, []facts.Fact{}, tell.AuditDoc{}, tell.EffectDocs(nil), tell.ForkDoc{}, tell.UndoDoc{},
		tell.RerunSuiteDoc{}, rerun.Report{}, tell.KeyDoc{}, seal.Verdict{}, search.Stats{}, drive.SearchResult{},
		[]drive.State{}, tell.StopDoc{}, []tell.TrustDoc{}, tell.PostedDoc{}, tell.TurnDoc{}, tell.InstructionsDoc{},
		tell.FactDoc{}, drive.Line{}, worker.EventRecord{},
		// The HTTP API.
		serve.ThreadSummary{}, serve.ThreadDetail{}, serve.AnswerResult{}, serve.PlanResult{}, serve.Replay{},
		serve.ForkPreview{}, serve.ForkResult{}, serve.UndoRefused{}, []audit.Effect{}, rewind.UndoPlan{},
		// The MCP server.
		mcpserver.ReplayView{},
	}
	var bad []string
	for _, d := range docs {
		ty := reflect.TypeOf(d)
		jsonKeys(ty, ty.String(), map[reflect.Type]bool{}, &bad)
	}
	require.Empty(t, bad, "keys that are not snake_case")

	// The check itself: a field without a tag is found, however deep.
	type step struct {
		Path     string `json:"path"`
		LeftMode uint32
	}
	type plan struct {
		Steps []step `json:"steps"`
	}
	bad = nil
	jsonKeys(reflect.TypeFor[plan](), "plan", map[reflect.Type]bool{}, &bad)
	require.Equal(t, []string{"plan.steps.LeftMode (main.step.LeftMode)"}, bad)
}
