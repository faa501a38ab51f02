package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/seed-7cc7a084/harness/tracing"
)

func env(vars map[string]string) tracing.Option {
	return tracing.WithLookupEnv(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
}

// collector is an OTLP/HTTP collector that keeps what it is sent.
type collector struct {
	srv *httptest.Server

	mu       sync.Mutex
	paths    []string
	types    []string
	requests []*exportRequest
	bodies   [][]byte
	errs     []error
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &exportRequest{}
		if err == nil {
			err = json.Unmarshal(body, req)
		}
		c.mu.Lock()
		c.paths = append(c.paths, r.Method+" "+r.URL.Path)
		c.types = append(c.types, r.Header.Get("Content-Type"))
		c.requests = append(c.requests, req)
		c.bodies = append(c.bodies, body)
		c.errs = append(c.errs, err)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// spans returns the names of the spans received, and the service.name of
// their resources.
func (c *collector) spans(t *testing.T) (names, services []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, req := range c.requests {
		require.NoError(t, c.errs[i])
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				if kv.Key == "service.name" {
					services = append(services, *kv.Value.StringValue)
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names = append(names, s.Name)
				}
			}
		}
	}
	return names, services
}

// emit makes one span as the runtime does.
func emit(t *testing.T, opts ...tracing.Option) (recording bool) {
	t.Helper()
	ctx := context.Background()
	tp, shutdown, err := tracing.Setup(ctx, opts...)
	require.NoError(t, err)
	_, span := tp.Tracer("harness").Start(ctx, "resume t1")
	span.SetAttributes(attribute.String("harness.thread", "t1"))
	recording = span.IsRecording()
	span.End()
	require.NoError(t, shutdown(ctx))
	return recording
}

func TestNoneByDefault(t *testing.T) {
	var buf bytes.Buffer
	for _, vars := range []map[string]string{nil, {"HARNESS_TRACE": "off"}, {"HARNESS_TRACE": ""}} {
		require.False(t, emit(t, env(vars), tracing.WithWriter(&buf)), "no provider records: %v", vars)
	}
	require.Zero(t, buf.Len())
}

func TestStdout(t *testing.T) {
	var buf bytes.Buffer
	require.True(t, emit(t, env(map[string]string{"HARNESS_TRACE": "stdout"}), tracing.WithWriter(&buf)))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 1, "one span, one line of JSON: %s", buf.String())
	var span struct {
		Name       string
		Attributes []struct {
			Key   string
			Value struct{ Value any }
		}
		Resource []struct {
			Key   string
			Value struct{ Value any }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &span))
	require.Equal(t, "resume t1", span.Name)
	require.Equal(t, "harness.thread", span.Attributes[0].Key)
	require.Equal(t, "t1", span.Attributes[0].Value.Value)
	var service any
	for _, kv := range span.Resource {
		if kv.Key == "service.name" {
			service = kv.Value.Value
		}
	}
	require.Equal(t, "harness", service)
}

func TestOTLP(t *testing.T) {
	tests := []struct {
		name string
		vars func(url string) map[string]string
	}{
		{"base endpoint", func(u string) map[string]string { return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u} }},
		{"base endpoint with a slash", func(u string) map[string]string { return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": u + "/"} }},
		{"traces endpoint, as it is", func(u string) map[string]string {
			return map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": u + "/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(t)
			require.True(t, emit(t, env(tc.vars(c.srv.URL))))
			names, services := c.spans(t)
			require.Equal(t, []string{"resume t1"}, names)
			require.Equal(t, []string{"harness"}, services)
			require.Equal(t, []string{"POST /v1/traces"}, c.paths)
			require.Equal(t, []string{"application/json"}, c.types)
		})
	}
}

func TestOTLPAndStdout(t *testing.T) {
	c := newCollector(t)
	var buf bytes.Buffer
	require.True(t, emit(t, env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.srv.URL, "HARNESS_TRACE": "stdout"}),
		tracing.WithWriter(&buf), tracing.WithServiceName("harness-cli")))
	names, services := c.spans(t)
	require.Equal(t, []string{"resume t1"}, names)
	require.Equal(t, []string{"harness-cli"}, services)
	require.Contains(t, buf.String(), `"Name":"resume t1"`)
}

func TestServiceNameFromEnv(t *testing.T) {
	c := newCollector(t)
	t.Setenv("OTEL_SERVICE_NAME", "my-agent")
	require.True(t, emit(t, env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.srv.URL})))
	_, services := c.spans(t)
	require.Equal(t, []string{"my-agent"}, services)
}

func TestBadSetting(t *testing.T) {
	_, _, err := tracing.Setup(context.Background(), env(map[string]string{"HARNESS_TRACE": "jaeger"}))
	require.EqualError(t, err, `tracing: HARNESS_TRACE="jaeger": want stdout, off, or unset`)
}
