package anthropic_test

import (
	"testing"

	"github.com/seed-7cc7a084/harness/internal/providertest"
	"github.com/seed-7cc7a084/harness/model"
	"github.com/seed-7cc7a084/harness/model/anthropic"
)

// TestEnvironment: ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are used, and
// options win over them.
func TestEnvironment(t *testing.T) {
	providertest.Environment(t, providertest.Anthropic, func(opts ...model.Option) (model.Model, error) { return anthropic.New("m", opts...) },
		[]providertest.EnvCase{
			{Name: "ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL",
				Env: func(f *providertest.Fake) map[string]string {
					return map[string]string{"ANTHROPIC_BASE_URL": f.Server.URL, "ANTHROPIC_API_KEY": "sk-ant-env"}
				},
				Auth: "Bearer sk-ant-env"},
			{Name: "anthropic options win over the environment",
				Env: func(f *providertest.Fake) map[string]string {
					return map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1", "ANTHROPIC_API_KEY": "sk-ant-env"}
				},
				Opts: func(f *providertest.Fake) []model.Option {
					return []model.Option{model.WithBaseURL(f.Server.URL), model.WithAPIKey("sk-ant-opt")}
				}, Auth: "Bearer sk-ant-opt"},
		})
}
