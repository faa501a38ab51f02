// Package tracing chooses where the harness's OpenTelemetry spans go, from
// the environment, in one call:
//
//   - OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
//     set: spans are exported over OTLP/HTTP in the JSON encoding
//     (OTLPExporter, this package's own: no gRPC or protobuf code) to that
//     collector (Jaeger, Tempo, Honeycomb, the OpenTelemetry Collector).
//     OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT, _COMPRESSION, _CERTIFICATE,
//     _CLIENT_CERTIFICATE and _CLIENT_KEY (and their _TRACES_ forms, which
//     win) apply as the OpenTelemetry specification says.
//   - HARNESS_TRACE=stdout: spans are written as JSON, one per line, to
//     standard error — standard output stays free for a command's own
//     output.
//   - both: both. Neither: no spans are recorded, at no cost.
//
// Setup returns the provider and a shutdown function that flushes what is
// buffered; call it before the process exits. Setup does not make the
// provider global: pass it where spans are made (harness.Services.Tracing),
// or call otel.SetTracerProvider for libraries that use the global one.
package tracing
