package stock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/anthropic"
	"github.com/seed-7cc7a084/harness/model/openai"
)

// TestOpenModel: the spec switch of LoadModel (model.Open before the
// providers had packages of their own).
func TestOpenModel(t *testing.T) {
	script := filepath.Join(t.TempDir(), "run.jsonl")
	require.NoError(t, os.WriteFile(script, []byte(`{"text": "hi"}`+"\n"), 0o644))
	env := map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
	lookup := model.WithLookupEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	noEnv := model.WithLookupEnv(func(string) (string, bool) { return "", false })
	tests := []struct {
		spec    string
		opts    []model.Option
		want    any    // the type returned
		wantErr string // or the error
		isSpec  bool   // the error wraps ErrSpec
	}{
		{spec: "scripted:" + script, want: &model.Scripted{}},
		{spec: "openai:gpt-4o-mini", opts: []model.Option{lookup}, want: &openai.Model{}},
		{spec: "openai:llama3.1:8b", opts: []model.Option{noEnv, model.WithBaseURL("http://localhost:11434/v1")}, want: &openai.Model{}},
		{spec: "anthropic:claude-sonnet-4-5", opts: []model.Option{lookup}, want: &anthropic.Model{}},
		{spec: "gpt-4o", wantErr: `model spec "gpt-4o": bad model spec: no provider; want scripted:FILE, openai:MODEL or anthropic:MODEL`, isSpec: true},
		{spec: "openai:", wantErr: `model spec "openai:": bad model spec: no model name; want scripted:FILE, openai:MODEL or anthropic:MODEL`, isSpec: true},
		{spec: "scripted:", wantErr: `no file; want`, isSpec: true},
		{spec: "gemini:pro", wantErr: `model spec "gemini:pro": bad model spec: unknown provider "gemini"; want scripted:FILE, openai:MODEL or anthropic:MODEL`, isSpec: true},
		{spec: "scripted:/no/such/file.jsonl", wantErr: "no such file"},
		{spec: "openai:gpt-4o-mini", opts: []model.Option{noEnv}, wantErr: "OPENAI_API_KEY is not set; set it, or set OPENAI_BASE_URL"},
		{spec: "anthropic:claude-sonnet-4-5", opts: []model.Option{noEnv}, wantErr: "ANTHROPIC_API_KEY is not set"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			m, err := openModel(tc.spec, tc.opts...)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Equal(t, tc.isSpec, errors.Is(err, model.ErrSpec))
				return
			}
			require.NoError(t, err)
			require.IsType(t, tc.want, m)
		})
	}
}
