package tracing

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// The environment variables Setup reads.
const (
	// EnvTrace set to "stdout" writes spans to standard error.
	EnvTrace = "HARNESS_TRACE"
	// EnvEndpoint is the OTLP collector's base URL; spans go to its
	// /v1/traces.
	EnvEndpoint = "OTEL_EXPORTER_OTLP_ENDPOINT"
	// EnvTracesEndpoint is the OTLP traces URL, used as it is; it wins
	// over EnvEndpoint.
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
)

// Option configures Setup.
type Option func(*config)

type config struct {
	writer    io.Writer
	service   string
	lookupEnv func(string) (string, bool)
	// client and headers are the OTLP exporter's (WithHTTPClient,
	// WithHeaders).
	client  *http.Client
	headers map[string]string
}

// WithWriter sets where HARNESS_TRACE=stdout writes spans; by default,
// os.Stderr.
func WithWriter(w io.Writer) Option { return func(c *config) { c.writer = w } }

// WithServiceName sets the service.name of the spans' resource; by
// default "harness". OTEL_SERVICE_NAME wins over it.
func WithServiceName(name string) Option { return func(c *config) { c.service = name } }

// WithLookupEnv sets where environment variables are read from; by
// default, os.LookupEnv.
func WithLookupEnv(f func(string) (string, bool)) Option {
	return func(c *config) { c.lookupEnv = f }
}

// WithHTTPClient sets the client the OTLP exporter posts with (its TLS
// configuration then wins over the OTEL_EXPORTER_OTLP_*CERTIFICATE
// variables); by default, one of its own.
func WithHTTPClient(c *http.Client) Option { return func(c2 *config) { c2.client = c } }

// WithHeaders adds headers to every OTLP request, over those
// OTEL_EXPORTER_OTLP_HEADERS gives.
func WithHeaders(h map[string]string) Option {
	return func(c *config) {
		if c.headers == nil {
			c.headers = map[string]string{}
		}
		for k, v := range h {
			c.headers[k] = v
		}
	}
}

// Setup returns the tracer provider the environment asks for (see the
// package doc) and the function that shuts it down, flushing buffered
// spans. An HARNESS_TRACE value other than "stdout", "off" or "" is an
// error naming it; so is an exporter that cannot be built.
func Setup(ctx context.Context, opts ...Option) (trace.TracerProvider, func(context.Context) error, error) {
	c := config{writer: os.Stderr, service: "harness", lookupEnv: os.LookupEnv}
	for _, o := range opts {
		o(&c)
	}
	env := func(k string) string { v, _ := c.lookupEnv(k); return strings.TrimSpace(v) }

	var stdout bool
	switch v := env(EnvTrace); strings.ToLower(v) {
	case "", "off", "none":
	case "stdout":
		stdout = true
	default:
		return nil, nil, fmt.Errorf("tracing: %s=%q: want stdout, off, or unset", EnvTrace, v)
	}
	endpoint := env(EnvTracesEndpoint)
	if endpoint == "" {
		if base := env(EnvEndpoint); base != "" {
			endpoint = strings.TrimRight(base, "/") + "/v1/traces"
		}
	}
	if !stdout && endpoint == "" {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}

	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", c.service)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
	)
	if err != nil && res == nil {
		return nil, nil, fmt.Errorf("tracing: resource: %w", err)
	}
	popts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if endpoint != "" {
		exp, err := newOTLPExporter(endpoint, c)
		if err != nil {
			return nil, nil, fmt.Errorf("tracing: OTLP exporter to %s: %w", endpoint, err)
		}
		popts = append(popts, sdktrace.WithBatcher(exp))
	}
	if stdout {
		exp, err := stdouttrace.New(stdouttrace.WithWriter(c.writer))
		if err != nil {
			return nil, nil, fmt.Errorf("tracing: stdout exporter: %w", err)
		}
		// Synchronously: a span is written when it ends, so what a
		// crashed process did is on stderr.
		popts = append(popts, sdktrace.WithSyncer(exp))
	}
	tp := sdktrace.NewTracerProvider(popts...)
	shutdown := func(ctx context.Context) error {
		if err := tp.Shutdown(ctx); err != nil {
			return fmt.Errorf("tracing: shutdown: %w", err)
		}
		return nil
	}
	return tp, shutdown, nil
}
