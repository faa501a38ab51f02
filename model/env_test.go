package model_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/model"
)

// TestEnvironment: the variables a user sets are the ones used, an
// option wins over a variable, and a local server needs no key.
func TestEnvironment(t *testing.T) {
	oa, an := providers[0], providers[1]
	tests := []struct {
		name string
		p    provider
		env  func(f *fake) map[string]string
		opts func(f *fake) []model.Option
		auth string // the Authorization header the server sees
	}{
		{"OPENAI_BASE_URL without a key (Ollama)", oa,
			func(f *fake) map[string]string { return map[string]string{"OPENAI_BASE_URL": f.srv.URL + "/v1"} },
			nil, ""},
		{"OPENAI_API_KEY and OPENAI_BASE_URL", oa,
			func(f *fake) map[string]string {
				return map[string]string{"OPENAI_BASE_URL": f.srv.URL + "/v1", "OPENAI_API_KEY": "sk-env"}
			},
			nil, "Bearer sk-env"},
		{"options win over the environment", oa,
			func(f *fake) map[string]string {
				return map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_API_KEY": "sk-env"}
			},
			func(f *fake) []model.Option {
				return []model.Option{model.WithBaseURL(f.srv.URL + "/v1"), model.WithAPIKey("sk-opt")}
			}, "Bearer sk-opt"},
		{"ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL", an,
			func(f *fake) map[string]string {
				return map[string]string{"ANTHROPIC_BASE_URL": f.srv.URL, "ANTHROPIC_API_KEY": "sk-ant-env"}
			},
			nil, "Bearer sk-ant-env"},
		{"anthropic options win over the environment", an,
			func(f *fake) map[string]string {
				return map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "ANTHROPIC_API_KEY": "sk-ant-env"}
			},
			func(f *fake) []model.Option {
				return []model.Option{model.WithBaseURL(f.srv.URL), model.WithAPIKey("sk-ant-opt")}
			}, "Bearer sk-ant-opt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.p.path, tc.p.text("hi"))
			// The SDKs read the process environment too: set it, so the
			// test sees what a user would.
			for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env(f) {
				t.Setenv(k, v)
			}
			var opts []model.Option
			if tc.opts != nil {
				opts = tc.opts(f)
			}
			m, err := model.Open(tc.p.name+":m", opts...)
			require.NoError(t, err)
			d, err := m.Turn(context.Background(), simpleRequest())
			require.NoError(t, err)
			require.Equal(t, "hi", d.Text)
			require.Equal(t, tc.auth, f.header(0).Get("Authorization"))
		})
	}
}
