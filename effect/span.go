package effect

import (
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation is the name under which the package asks for a tracer.
const instrumentation = "github.com/seed-7cc7a084/harness/effect"

// AttrExit is the span attribute that [WithSpan] sets to how the run ended
// ("success", "fail", "die" or "interrupt").
const AttrExit = attribute.Key("harness.exit")

// Traced is implemented by services that carry their own OpenTelemetry
// tracer provider. [WithSpan] uses it when the services of the run
// implement it, and the global provider (otel.GetTracerProvider) otherwise.
type Traced interface {
	TracerProvider() trace.TracerProvider
}

// globalTracer delegates to whatever global provider is set, even one set
// after this line runs; with none set it is a no-op tracer.
var globalTracer = otel.Tracer(instrumentation)

// WithSpan describes e recorded as one OpenTelemetry span per run, named
// name and carrying attrs. The span's status and its harness.exit attribute
// come from the Exit: a Fail or a Die sets the status to Error with the
// error's message, and a Die adds the defect's stack as an event. The span
// is the parent of spans started inside e through its context.
//
// With no tracer provider configured, the span is a no-op and costs a
// context allocation.
func WithSpan[S, A any](e Effect[S, A], name string, attrs ...attribute.KeyValue) Effect[S, A] {
	if e.run == nil {
		return Die[S, A](ErrNilEffect)
	}
	inner := e
	opt := trace.WithAttributes(attrs...)
	return Effect[S, A]{run: func(r *runner, s S) Exit[A] {
		tracer := globalTracer
		if t, ok := any(s).(Traced); ok {
			tracer = t.TracerProvider().Tracer(instrumentation)
		}
		ctx, span := tracer.Start(r.ctx, name, opt)
		// The span must end even when e panics, so a panic becomes a Die here.
		ex := runProtected(&runner{ctx: ctx, depth: r.depth}, inner, s)
		if span.IsRecording() {
			recordExit(span, ex.Kind(), ex.Err())
		}
		span.End()
		return ex
	}}
}

func recordExit(span trace.Span, o ExitKind, err error) {
	span.SetAttributes(AttrExit.String(o.String()))
	switch o {
	case ExitSuccess:
		span.SetStatus(codes.Ok, "")
	case ExitInterrupt:
		span.SetStatus(codes.Error, err.Error())
	default:
		span.SetStatus(codes.Error, err.Error())
		span.RecordError(err)
		var d *DefectError
		if errors.As(err, &d) {
			span.AddEvent("defect", trace.WithAttributes(attribute.String("stack", string(d.Stack))))
		}
	}
}
