package tracing_test

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"

	"github.com/seed-7cc7a084/harness/tracing"
)

// Setup at the start of a command, shutdown at its end. With neither
// OTEL_EXPORTER_OTLP_ENDPOINT nor HARNESS_TRACE set, spans cost nothing.
func ExampleSetup() {
	ctx := context.Background()
	tp, shutdown, err := tracing.Setup(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer shutdown(ctx)
	otel.SetTracerProvider(tp) // for libraries that use the global provider
	// ... harness.Services{Tracing: tp, ...}
}
