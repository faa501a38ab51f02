package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/openai"
)

// TestEnvironment: OPENAI_API_KEY and OPENAI_BASE_URL are used, options
// win over them, and a local server needs no key.
func TestEnvironment(t *testing.T) {
	providertest.Environment(t, providertest.OpenAI, func(opts ...model.Option) (model.Model, error) { return openai.New("m", opts...) },
		[]providertest.EnvCase{
			{Name: "OPENAI_BASE_URL without a key (Ollama)",
				Env: func(f *providertest.Fake) map[string]string {
					return map[string]string{"OPENAI_BASE_URL": f.Server.URL + "/v1"}
				},
				Auth: ""},
			{Name: "OPENAI_API_KEY and OPENAI_BASE_URL",
				Env: func(f *providertest.Fake) map[string]string {
					return map[string]string{"OPENAI_BASE_URL": f.Server.URL + "/v1", "OPENAI_API_KEY": "sk-env"}
				},
				Auth: "Bearer sk-env"},
			{Name: "options win over the environment",
				Env: func(f *providertest.Fake) map[string]string {
					return map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "sk-env"}
				},
				Opts: func(f *providertest.Fake) []model.Option {
					return []model.Option{model.WithBaseURL(f.Server.URL + "/v1"), model.WithAPIKey("sk-opt")}
				}, Auth: "Bearer sk-opt"},
		})
}

// setRealOpenAIEnv puts credentials in the process environment, where the
// SDK's own defaults would find them; every value holds "REAL".
func setRealOpenAIEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-REAL")
	t.Setenv("OPENAI_ADMIN_KEY", "sk-admin-REAL")
	t.Setenv("OPENAI_ORG_ID", "org-REAL")
	t.Setenv("OPENAI_PROJECT_ID", "proj-REAL")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Secret: REAL")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
}

// requireNoReal fails if any header the server saw carries a value from
// the process environment.
func requireNoReal(t *testing.T, f *providertest.Fake, n int) {
	t.Helper()
	for i := range n {
		for name, vs := range f.Header(i) {
			for _, v := range vs {
				require.NotContains(t, v, "REAL", "request %d: header %s came from the process environment", i, name)
			}
		}
		require.Empty(t, f.Header(i).Get("Authorization"), "request %d", i)
	}
}

// TestOpenAIIgnoresProcessEnvironment: with WithLookupEnv that has
// nothing and WithBaseURL, the process environment's key, organization,
// project and custom headers never reach the server — neither on a turn
// nor on a stream.
func TestOpenAIIgnoresProcessEnvironment(t *testing.T) {
	setRealOpenAIEnv(t)
	f := providertest.NewFake(t, "/v1/chat/completions", providertest.OpenAI.Text("hi"))
	m, err := openai.New("m",
		model.WithLookupEnv(func(string) (string, bool) { return "", false }),
		model.WithBaseURL(f.Server.URL+"/v1"))
	require.NoError(t, err)
	d, err := m.Turn(context.Background(), providertest.SimpleRequest())
	require.NoError(t, err)
	require.Equal(t, "hi", d.Text)

	fs := providertest.NewFake(t, "/v1/chat/completions", providertest.OpenAI.Stream([]string{"h", "i"}, true))
	ms, err := openai.New("m",
		model.WithLookupEnv(func(string) (string, bool) { return "", false }),
		model.WithBaseURL(fs.Server.URL+"/v1"))
	require.NoError(t, err)
	d, err = ms.Stream(context.Background(), providertest.SimpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, "hi", d.Text)

	requireNoReal(t, f, 1)
	requireNoReal(t, fs, 1)
}

// TestOpenAIEmptyAPIKeyOption: WithAPIKey("") means no key, even with
// OPENAI_API_KEY set in the process environment.
func TestOpenAIEmptyAPIKeyOption(t *testing.T) {
	setRealOpenAIEnv(t)
	t.Setenv("OPENAI_ORG_ID", "")
	t.Setenv("OPENAI_PROJECT_ID", "")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "")
	f := providertest.NewFake(t, "/v1/chat/completions", providertest.OpenAI.Text("hi"))
	m, err := openai.New("m", model.WithAPIKey(""), model.WithBaseURL(f.Server.URL+"/v1"))
	require.NoError(t, err)
	_, err = m.Turn(context.Background(), providertest.SimpleRequest())
	require.NoError(t, err)
	requireNoReal(t, f, 1)
}

// TestOpenAILookupEnvSettings: the organization, project and custom
// headers still apply, read through WithLookupEnv.
func TestOpenAILookupEnvSettings(t *testing.T) {
	setRealOpenAIEnv(t)
	f := providertest.NewFake(t, "/v1/chat/completions", providertest.OpenAI.Text("hi"))
	env := map[string]string{
		"OPENAI_API_KEY":        "sk-lookup",
		"OPENAI_BASE_URL":       f.Server.URL + "/v1",
		"OPENAI_ORG_ID":         "org-lookup",
		"OPENAI_PROJECT_ID":     "proj-lookup",
		"OPENAI_CUSTOM_HEADERS": "X-One: 1\nX-Two:  two words ",
	}
	m, err := openai.New("m", model.WithLookupEnv(func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}))
	require.NoError(t, err)
	_, err = m.Turn(context.Background(), providertest.SimpleRequest())
	require.NoError(t, err)
	h := f.Header(0)
	require.Equal(t, "Bearer sk-lookup", h.Get("Authorization"))
	require.Equal(t, "org-lookup", h.Get("OpenAI-Organization"))
	require.Equal(t, "proj-lookup", h.Get("OpenAI-Project"))
	require.Equal(t, "1", h.Get("X-One"))
	require.Equal(t, "two words", h.Get("X-Two"))
	for name, vs := range h {
		require.False(t, strings.Contains(strings.Join(vs, ","), "REAL"), "header %s came from the process environment", name)
	}
}
