package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/action"
	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/tools"
)

// workspace returns a fresh workspace holding files (path → content) and
// its tools.
func workspace(t *testing.T, files map[string]string, opts ...tools.Option) (*tools.Set, string) {
	t.Helper()
	root := t.TempDir()
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	s, err := tools.New(root, opts...)
	require.NoError(t, err)
	return s, root
}

// call runs the named tool with args, which must not fail to be tried.
func call(t *testing.T, s *tools.Set, name, args string) facts.Report {
	t.Helper()
	tool, ok := s.Lookup(name)
	require.True(t, ok, "no tool %s", name)
	rep, err := tool.Execute(context.Background(), action.Request{Adapter: name, Payload: json.RawMessage(args)})
	require.NoError(t, err)
	require.NoError(t, rep.Status.Validate())
	return rep
}

// js encodes v as JSON arguments.
func js(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}

func readFile(t *testing.T, root, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	require.NoError(t, err)
	return string(data)
}

func TestSetOrderAndLookup(t *testing.T) {
	s, root := workspace(t, nil)
	var names []string
	for _, tool := range s.Tools() {
		names = append(names, tool.Name())
	}
	require.Equal(t, []string{tools.ReadFile, tools.ListFiles, tools.WriteFile, tools.EditFile, tools.RunCommand}, names)
	real, err := filepath.Abs(root)
	require.NoError(t, err)
	require.Equal(t, real, s.Root())
	_, ok := s.Lookup("rm_rf")
	require.False(t, ok)
	require.Len(t, s.Schemas(), 5)
}

func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		name string
		root string
		opts []tools.Option
		want string
	}{
		{"missing root", filepath.Join(dir, "nope"), nil, "no such file"},
		{"root is a file", file, nil, "not a directory"},
		{"confirm names no tool", dir, []tools.Option{tools.WithConfirm(false, "delete_everything")}, `"delete_everything", which is not a tool`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tools.New(tc.root, tc.opts...)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The schema is what the model is offered: a JSON object schema whose
// properties are exactly the fields the tool accepts.
func TestSchemas(t *testing.T) {
	s, _ := workspace(t, nil)
	want := map[string]struct{ props, required []string }{
		tools.ReadFile:   {[]string{"limit", "max_bytes", "offset", "path"}, []string{"path"}},
		tools.ListFiles:  {[]string{"pattern"}, nil},
		tools.WriteFile:  {[]string{"content", "path"}, []string{"path", "content"}},
		tools.EditFile:   {[]string{"new", "old", "path"}, []string{"path", "old", "new"}},
		tools.RunCommand: {[]string{"command", "timeout_seconds"}, []string{"command"}},
	}
	for _, tool := range s.Tools() {
		t.Run(tool.Name(), func(t *testing.T) {
			sc := tool.Schema()
			require.Equal(t, tool.Name(), sc.Name)
			require.NotEmpty(t, sc.Description)
			require.True(t, json.Valid(sc.Schema), "schema is not valid JSON: %s", sc.Schema)
			var doc struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
				Additional *bool                      `json:"additionalProperties"`
			}
			require.NoError(t, json.Unmarshal(sc.Schema, &doc))
			require.Equal(t, "object", doc.Type)
			require.NotNil(t, doc.Additional)
			require.False(t, *doc.Additional)
			var props []string
			for p, raw := range doc.Properties {
				props = append(props, p)
				var ps struct {
					Type        string `json:"type"`
					Description string `json:"description"`
				}
				require.NoError(t, json.Unmarshal(raw, &ps))
				require.NotEmpty(t, ps.Type, p)
				require.NotEmpty(t, ps.Description, p)
			}
			slices.Sort(props)
			require.Equal(t, want[tool.Name()].props, props)
			require.Equal(t, want[tool.Name()].required, doc.Required)
			// The schema's bytes are stable: they are recorded in the log.
			require.Equal(t, sc.Schema, tool.Schema().Schema)
		})
	}
}

func TestCapabilityAndConfirmDefaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []tools.Option
		confirm map[string]bool
	}{
		{"defaults", nil, map[string]bool{tools.ReadFile: false, tools.ListFiles: false, tools.WriteFile: true, tools.EditFile: true, tools.RunCommand: true}},
		{"never confirm", []tools.Option{tools.WithConfirm(false)}, map[string]bool{tools.ReadFile: false, tools.ListFiles: false, tools.WriteFile: false, tools.EditFile: false, tools.RunCommand: false}},
		{"confirm one more", []tools.Option{tools.WithConfirm(true, tools.ReadFile)}, map[string]bool{tools.ReadFile: true, tools.ListFiles: false, tools.WriteFile: true, tools.EditFile: true, tools.RunCommand: true}},
		{"all then one", []tools.Option{tools.WithConfirm(false), tools.WithConfirm(true, tools.RunCommand)}, map[string]bool{tools.ReadFile: false, tools.ListFiles: false, tools.WriteFile: false, tools.EditFile: false, tools.RunCommand: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := workspace(t, nil, tc.opts...)
			capability := map[string]action.Capability{}
			confirm := map[string]bool{}
			for _, tool := range s.Tools() {
				capability[tool.Name()] = tool.Capability()
				confirm[tool.Name()] = tool.Confirm()
				require.NoError(t, tool.Capability().Validate())
			}
			require.Equal(t, map[string]action.Capability{
				tools.ReadFile: action.Read, tools.ListFiles: action.Read,
				tools.WriteFile: action.Write, tools.EditFile: action.Write, tools.RunCommand: action.Execute,
			}, capability)
			require.Equal(t, tc.confirm, confirm)
		})
	}
}

// Every tool answers bad input with a failed report naming the problem,
// never a panic and never a Go error.
func TestBadInput(t *testing.T) {
	s, _ := workspace(t, map[string]string{"a.txt": "a\n"})
	cases := []struct {
		name string
		args string
		want string
	}{
		{"nothing", ``, "no arguments; want a JSON object"},
		{"null", `null`, "got null; want a JSON object"},
		{"array", `[1,2]`, "got a JSON array; want a JSON object"},
		{"string", `"a.txt"`, "got a JSON string; want a JSON object"},
		{"malformed", `{"path": "a.txt"`, "malformed JSON"},
		{"trailing data", `{"path": "a.txt"} {}`, "malformed JSON"},
		{"unknown field", `{"path": "a.txt", "content": "x", "old": "a", "new": "b", "command": "true", "colour": "red"}`, `unknown field "colour"`},
		{"wrong case", `{"PATH": "a.txt"}`, `unknown field "PATH"`},
		// A person shown both values cannot tell which one runs.
		{"duplicate key", `{"path": "a.txt", "path": ".git/config"}`, `duplicate key "path" in the top-level object`},
		{"duplicate key, escaped", `{"path": "a.txt", "p\u0061th": "b.txt"}`, `duplicate key "path" in the top-level object`},
		{"duplicate key, nested", `{"x": [{"k": 1, "k": 2}]}`, `duplicate key "k" in the object at $.x[0]`},
	}
	for _, tool := range s.Tools() {
		for _, tc := range cases {
			t.Run(tool.Name()+"/"+tc.name, func(t *testing.T) {
				args := tc.args
				if tc.name == "unknown field" {
					// Only the tool's own fields plus one stranger.
					args = map[string]string{
						tools.ReadFile:   `{"path": "a.txt", "colour": "red"}`,
						tools.ListFiles:  `{"pattern": "*", "colour": "red"}`,
						tools.WriteFile:  `{"path": "a.txt", "content": "x", "colour": "red"}`,
						tools.EditFile:   `{"path": "a.txt", "old": "a", "new": "b", "colour": "red"}`,
						tools.RunCommand: `{"command": "true", "colour": "red"}`,
					}[tool.Name()]
				}
				rep := call(t, s, tool.Name(), args)
				require.Equal(t, facts.StatusFailed, rep.Status)
				require.Contains(t, rep.Error, tool.Name()+": invalid arguments: ")
				require.Contains(t, rep.Error, tc.want)
			})
		}
	}

	perTool := []struct {
		tool, args, want string
	}{
		{tools.ReadFile, `{}`, `missing required field "path"`},
		{tools.ReadFile, `{"path": null}`, `missing required field "path"`},
		{tools.ReadFile, `{"path": 7}`, `field "path": got number, want string`},
		{tools.ReadFile, `{"path": "a.txt", "offset": "3"}`, `field "offset": got string, want integer`},
		{tools.ReadFile, `{"path": "a.txt", "offset": 0}`, `field "offset" is 0; want at least 1`},
		{tools.ReadFile, `{"path": "a.txt", "limit": -2}`, `field "limit" is -2; want at least 1`},
		{tools.ReadFile, `{"path": "a.txt", "max_bytes": 99999999}`, `field "max_bytes" is 99999999; the most is 131072`},
		{tools.ReadFile, `{"path": ""}`, `path is empty`},
		{tools.ListFiles, `{"pattern": "[a-"}`, `pattern "[a-": segment "[a-": syntax error in pattern`},
		{tools.ListFiles, `{"pattern": ["*.go"]}`, `field "pattern": got array, want string`},
		{tools.WriteFile, `{"path": "b.txt"}`, `missing required field "content"`},
		{tools.WriteFile, `{}`, `missing required fields "path", "content"`},
		{tools.EditFile, `{"path": "a.txt", "old": "a"}`, `missing required field "new"`},
		{tools.EditFile, `{"path": "a.txt", "old": "", "new": "b"}`, `field "old" is empty; to create a file, use write_file`},
		{tools.EditFile, `{"path": "a.txt", "old": "a", "new": "a"}`, `old and new are the same text`},
		{tools.RunCommand, `{}`, `missing required field "command"`},
		{tools.RunCommand, `{"command": ["ls", "-l"]}`, `field "command": got array, want string`},
		{tools.RunCommand, `{"command": "  "}`, `field "command" is empty`},
		{tools.RunCommand, `{"command": "true", "timeout_seconds": 0}`, `field "timeout_seconds" is 0; want more than 0 and at most 600`},
		{tools.RunCommand, `{"command": "true", "timeout_seconds": 601}`, `field "timeout_seconds" is 601; want more than 0 and at most 600`},
	}
	for _, tc := range perTool {
		t.Run(tc.tool+"/"+tc.args, func(t *testing.T) {
			rep := call(t, s, tc.tool, tc.args)
			require.Equal(t, facts.StatusFailed, rep.Status)
			require.Contains(t, rep.Error, tc.want)
		})
	}
	require.Equal(t, "a\n", readFile(t, s.Root(), "a.txt"), "bad input changed nothing")
}

// Declared checks: write_file and edit_file declare FileEquals on the
// target, and the check passes against what they then write.
func TestDeclaredChecks(t *testing.T) {
	s, root := workspace(t, map[string]string{"cache.toml": "ttl_seconds = 60\nsize = 10\n"})
	for _, tc := range []struct {
		tool, args string
		want       *facts.CheckSpec
	}{
		{tools.ReadFile, `{"path": "cache.toml"}`, nil},
		{tools.ListFiles, `{}`, nil},
		{tools.RunCommand, `{"command": "true"}`, nil},
		{tools.WriteFile, `{"path": "./conf/../new.toml", "content": "a = 1\n"}`, ptr(action.FileEquals("new.toml", []byte("a = 1\n")))},
		{tools.EditFile, `{"path": "cache.toml", "old": "ttl_seconds = 60", "new": "ttl_seconds = 300"}`,
			ptr(action.FileEquals("cache.toml", []byte("ttl_seconds = 300\nsize = 10\n")))},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			tool, _ := s.Lookup(tc.tool)
			spec, err := tool.Check(json.RawMessage(tc.args))
			require.NoError(t, err)
			require.Equal(t, tc.want, spec)
			if spec == nil {
				return
			}
			before := action.Decide(context.Background(), "a1", *spec, action.CheckEnv{Root: root})
			require.Equal(t, facts.VerdictFail, before.Verdict, before.Reason)
			rep := call(t, s, tc.tool, tc.args)
			require.Equal(t, facts.StatusSucceeded, rep.Status, rep.Error)
			after := action.Decide(context.Background(), "a1", *spec, action.CheckEnv{Root: root})
			require.Equal(t, facts.VerdictPass, after.Verdict, after.Reason)
		})
	}
}

func TestCheckRefuses(t *testing.T) {
	s, _ := workspace(t, map[string]string{"a.txt": "x x\n"})
	for _, tc := range []struct {
		tool, args string
		want       error
	}{
		{tools.WriteFile, `{"path": "a.txt"}`, tools.ErrInvalidArgs},
		{tools.WriteFile, `{"path": "../a.txt", "content": ""}`, tools.ErrOutsideWorkspace},
		{tools.EditFile, `{"path": "a.txt", "old": "y", "new": "z"}`, tools.ErrNoMatch},
		{tools.EditFile, `{"path": "a.txt", "old": "x", "new": "z"}`, tools.ErrAmbiguousMatch},
		{tools.EditFile, `{"path": "/etc/hostname", "old": "x", "new": "z"}`, tools.ErrOutsideWorkspace},
	} {
		t.Run(tc.tool+"/"+tc.args, func(t *testing.T) {
			tool, _ := s.Lookup(tc.tool)
			spec, err := tool.Check(json.RawMessage(tc.args))
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, spec)
		})
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	s, root := workspace(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tool := range s.Tools() {
		rep, err := tool.Execute(ctx, action.Request{Payload: json.RawMessage(`{"path": "x", "content": "x", "command": "touch x"}`)})
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, facts.StatusFailed, rep.Status)
	}
	_, err := os.Stat(filepath.Join(root, "x"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func ptr[T any](v T) *T { return &v }

// A workspace that is gone cannot even be tried: a Go error, not a report
// about the call.
func TestWorkspaceGone(t *testing.T) {
	s, root := workspace(t, map[string]string{"a.txt": "a"})
	require.NoError(t, os.RemoveAll(root))
	for _, name := range []string{tools.ReadFile, tools.ListFiles, tools.WriteFile, tools.EditFile} {
		tool, _ := s.Lookup(name)
		rep, err := tool.Execute(context.Background(), action.Request{Payload: json.RawMessage(map[string]string{
			tools.ReadFile:  `{"path": "a.txt"}`,
			tools.ListFiles: `{}`,
			tools.WriteFile: `{"path": "a.txt", "content": "b"}`,
			tools.EditFile:  `{"path": "a.txt", "old": "a", "new": "b"}`,
		}[name])})
		require.ErrorContains(t, err, name+": open workspace: ")
		require.Equal(t, facts.StatusFailed, rep.Status)
	}
}
