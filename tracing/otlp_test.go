package tracing_test

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-7cc7a084/harness/tracing"
)

// exportRequest is an OTLP/JSON ExportTraceServiceRequest as a collector
// reads it, with the fields the tests look at. Every number is kept as
// the JSON gave it: 64-bit integers must come as strings.
type exportRequest struct {
	ResourceSpans []struct {
		Resource struct {
			Attributes []kv `json:"attributes"`
		} `json:"resource"`
		SchemaURL  string `json:"schemaUrl"`
		ScopeSpans []struct {
			Scope struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			} `json:"scope"`
			Spans []struct {
				TraceID           string `json:"traceId"`
				SpanID            string `json:"spanId"`
				ParentSpanID      string `json:"parentSpanId"`
				TraceState        string `json:"traceState"`
				Flags             json.RawMessage
				Name              string          `json:"name"`
				Kind              json.RawMessage `json:"kind"`
				StartTimeUnixNano json.RawMessage `json:"startTimeUnixNano"`
				EndTimeUnixNano   json.RawMessage `json:"endTimeUnixNano"`
				Attributes        []kv            `json:"attributes"`
				Events            []struct {
					Name         string          `json:"name"`
					TimeUnixNano json.RawMessage `json:"timeUnixNano"`
					Attributes   []kv            `json:"attributes"`
				} `json:"events"`
				Links []struct {
					TraceID string `json:"traceId"`
					SpanID  string `json:"spanId"`
				} `json:"links"`
				Status *struct {
					Code    json.RawMessage `json:"code"`
					Message string          `json:"message"`
				} `json:"status"`
			} `json:"spans"`
		} `json:"scopeSpans"`
	} `json:"resourceSpans"`
}

type kv struct {
	Key   string `json:"key"`
	Value struct {
		StringValue *string         `json:"stringValue"`
		BoolValue   *bool           `json:"boolValue"`
		IntValue    json.RawMessage `json:"intValue"`
		DoubleValue json.RawMessage `json:"doubleValue"`
		BytesValue  *string         `json:"bytesValue"`
		ArrayValue  *struct {
			Values []json.RawMessage `json:"values"`
		} `json:"arrayValue"`
	} `json:"value"`
}

// attr is the attribute key of kvs, or fails.
func attr(t *testing.T, kvs []kv, key string) kv {
	t.Helper()
	for _, a := range kvs {
		if a.Key == key {
			return a
		}
	}
	t.Fatalf("no attribute %q in %+v", key, kvs)
	return kv{}
}

var hexID = regexp.MustCompile(`^[0-9a-f]+$`)

// The JSON a collector gets: resource attributes, scope, ids in hex,
// times and int64s as decimal strings, kind and status as numbers,
// events and links, the parent's id.
func TestOTLPJSONShape(t *testing.T) {
	c := newCollector(t)
	ctx := context.Background()
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
	tp, shutdown, err := tracing.Setup(ctx, env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": c.srv.URL}))
	require.NoError(t, err)
	tr := tp.Tracer("harness", trace.WithInstrumentationVersion("v1.2.3"))
	ctx, parent := tr.Start(ctx, "resume t1", trace.WithSpanKind(trace.SpanKindServer))
	_, child := tr.Start(ctx, "model turn", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithLinks(trace.Link{SpanContext: parent.SpanContext()}))
	child.SetAttributes(
		attribute.String("harness.thread", "t1"),
		attribute.Int64("big", math.MaxInt64),
		attribute.Bool("ok", true),
		attribute.Float64("ratio", 0.5),
		attribute.Float64("nan", math.NaN()),
		attribute.Float64("zero", 0),
		attribute.StringSlice("tools", []string{"read_file", "write_file"}),
		attribute.String("hostile", "\"}],\u2028<script>\x00"),
	)
	child.AddEvent("retry", trace.WithAttributes(attribute.Int("attempt", 2)))
	child.SetStatus(codes.Error, "provider 500")
	child.End()
	parent.SetStatus(codes.Ok, "")
	parent.End()
	require.NoError(t, shutdown(ctx))

	c.mu.Lock()
	defer c.mu.Unlock()
	require.Len(t, c.requests, 1)
	require.NoError(t, c.errs[0])
	require.True(t, json.Valid(c.bodies[0]))
	req := c.requests[0]
	require.Len(t, req.ResourceSpans, 1)
	rs := req.ResourceSpans[0]
	require.Equal(t, "harness", *attr(t, rs.Resource.Attributes, "service.name").Value.StringValue)
	require.Equal(t, "test", *attr(t, rs.Resource.Attributes, "deployment.environment").Value.StringValue)
	require.Equal(t, "go", *attr(t, rs.Resource.Attributes, "telemetry.sdk.language").Value.StringValue)
	require.Len(t, rs.ScopeSpans, 1)
	require.Equal(t, "harness", rs.ScopeSpans[0].Scope.Name)
	require.Equal(t, "v1.2.3", rs.ScopeSpans[0].Scope.Version)
	spans := rs.ScopeSpans[0].Spans
	require.Len(t, spans, 2)
	ch, pa := spans[0], spans[1]
	require.Equal(t, "model turn", ch.Name)
	require.Equal(t, "resume t1", pa.Name)

	ptid, psid := parent.SpanContext().TraceID(), parent.SpanContext().SpanID()
	csid := child.SpanContext().SpanID()
	require.Equal(t, hex.EncodeToString(ptid[:]), pa.TraceID)
	require.Len(t, pa.TraceID, 32)
	require.Len(t, pa.SpanID, 16)
	require.Regexp(t, hexID, pa.TraceID)
	require.Equal(t, hex.EncodeToString(psid[:]), pa.SpanID)
	require.Equal(t, hex.EncodeToString(csid[:]), ch.SpanID)
	require.Equal(t, pa.TraceID, ch.TraceID)
	require.Equal(t, pa.SpanID, ch.ParentSpanID)
	require.Empty(t, pa.ParentSpanID)
	require.Equal(t, `2`, string(pa.Kind), "SPAN_KIND_SERVER as a number")
	require.Equal(t, `3`, string(ch.Kind), "SPAN_KIND_CLIENT")
	require.Equal(t, `257`, string(ch.Flags), "sampled, the parent known to be local")
	require.Regexp(t, `^"[0-9]{19}"$`, string(ch.StartTimeUnixNano))
	require.Regexp(t, `^"[0-9]{19}"$`, string(ch.EndTimeUnixNano))

	require.Equal(t, "t1", *attr(t, ch.Attributes, "harness.thread").Value.StringValue)
	require.Equal(t, `"9223372036854775807"`, string(attr(t, ch.Attributes, "big").Value.IntValue))
	require.True(t, *attr(t, ch.Attributes, "ok").Value.BoolValue)
	require.Equal(t, `0.5`, string(attr(t, ch.Attributes, "ratio").Value.DoubleValue))
	require.Equal(t, `"NaN"`, string(attr(t, ch.Attributes, "nan").Value.DoubleValue))
	require.Equal(t, `0`, string(attr(t, ch.Attributes, "zero").Value.DoubleValue))
	tools := attr(t, ch.Attributes, "tools").Value.ArrayValue
	require.NotNil(t, tools)
	require.Len(t, tools.Values, 2)
	require.JSONEq(t, `{"stringValue":"read_file"}`, string(tools.Values[0]))
	require.Equal(t, "\"}],\u2028<script>\x00", *attr(t, ch.Attributes, "hostile").Value.StringValue)

	require.Len(t, ch.Events, 1)
	require.Equal(t, "retry", ch.Events[0].Name)
	require.Regexp(t, `^"[0-9]{19}"$`, string(ch.Events[0].TimeUnixNano))
	require.Equal(t, `"2"`, string(attr(t, ch.Events[0].Attributes, "attempt").Value.IntValue))
	require.Len(t, ch.Links, 1)
	require.Equal(t, pa.SpanID, ch.Links[0].SpanID)
	require.Equal(t, pa.TraceID, ch.Links[0].TraceID)

	require.NotNil(t, ch.Status)
	require.Equal(t, `2`, string(ch.Status.Code), "STATUS_CODE_ERROR is 2 in OTLP (1 in the SDK)")
	require.Equal(t, "provider 500", ch.Status.Message)
	require.NotNil(t, pa.Status)
	require.Equal(t, `1`, string(pa.Status.Code), "STATUS_CODE_OK")
}

// spansOf makes n ended spans to export.
func spansOf(n int) []sdktrace.ReadOnlySpan {
	stubs := make(tracetest.SpanStubs, n)
	for i := range stubs {
		stubs[i] = tracetest.SpanStub{
			Name: "s",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{
				TraceID: trace.TraceID{1}, SpanID: trace.SpanID{byte(i + 1)}, TraceFlags: trace.FlagsSampled,
			}),
			StartTime: time.Unix(1, 0), EndTime: time.Unix(2, 0),
		}
	}
	return stubs.Snapshots()
}

// The variables: headers (URL-decoded), gzip, the traces endpoint's own
// timeout over the general one.
func TestOTLPEnvironment(t *testing.T) {
	var got http.Header
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		zr, err := gzip.NewReader(r.Body)
		require.NoError(t, err)
		body, _ = io.ReadAll(zr)
	}))
	defer srv.Close()
	e, err := tracing.NewOTLPExporter(srv.URL+"/v1/traces", lookup(map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS":            "x-api-key=a%20b%3Dc, x-team = core",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip",
		"OTEL_EXPORTER_OTLP_COMPRESSION":        "none",
	}), tracing.WithHeaders(map[string]string{"x-team": "mine"}))
	require.NoError(t, err)
	require.NoError(t, e.ExportSpans(context.Background(), spansOf(2)))
	require.Equal(t, "a b=c", got.Get("X-Api-Key"))
	require.Equal(t, "mine", got.Get("X-Team"), "an option wins over the variable")
	require.Equal(t, "gzip", got.Get("Content-Encoding"))
	require.Equal(t, "application/json", got.Get("Content-Type"))
	require.Contains(t, string(body), `"spanId":"0100000000000000"`)
	require.Contains(t, string(body), `"startTimeUnixNano":"1000000000"`)

	for vars, want := range map[string]map[string]string{
		"headers":           {"OTEL_EXPORTER_OTLP_HEADERS": "novalue"},
		"header line break": {"OTEL_EXPORTER_OTLP_HEADERS": "a=b%0D%0AEvil: 1"},
		"timeout":           {"OTEL_EXPORTER_OTLP_TIMEOUT": "-5"},
		"compression":       {"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		"certificate":       {"OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent/ca.pem"},
		"client key alone":  {"OTEL_EXPORTER_OTLP_CLIENT_KEY": "/nonexistent/key.pem"},
	} {
		_, err := tracing.NewOTLPExporter(srv.URL, lookup(want))
		require.ErrorIs(t, err, tracing.ErrSetting, vars)
	}
	_, err = tracing.NewOTLPExporter("file:///etc/passwd", nil)
	require.ErrorIs(t, err, tracing.ErrSetting)
}

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// A 503 is retried (after Retry-After); a 400 is an error at once, with
// the collector's answer; a partial success that rejected spans is an
// error; a collector that keeps failing ends at the timeout.
func TestOTLPAnswers(t *testing.T) {
	var calls atomic.Int32
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		switch s := int(status.Load()); {
		case s == 503 && n == 1:
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(503)
		case s == 503:
			w.Write([]byte(`{}`))
		case s == 999:
			w.WriteHeader(503)
		case s == 206:
			w.Write([]byte(`{"partialSuccess":{"rejectedSpans":"1","errorMessage":"too old"}}`))
		default:
			w.WriteHeader(s)
			w.Write([]byte("{\"code\":3,\n\"message\":\"bad span\"}"))
		}
	}))
	defer srv.Close()
	e, err := tracing.NewOTLPExporter(srv.URL, lookup(map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "1500"}))
	require.NoError(t, err)
	ctx := context.Background()

	status.Store(503)
	require.NoError(t, e.ExportSpans(ctx, spansOf(1)))
	require.EqualValues(t, 2, calls.Load(), "retried once")

	calls.Store(0)
	status.Store(400)
	err = e.ExportSpans(ctx, spansOf(1))
	require.ErrorIs(t, err, tracing.ErrExport)
	require.ErrorContains(t, err, `400 Bad Request: "{\"code\":3, \"message\":\"bad span\"}"`)
	require.EqualValues(t, 1, calls.Load(), "not retried")

	status.Store(206)
	err = e.ExportSpans(ctx, spansOf(1))
	require.ErrorIs(t, err, tracing.ErrExport)
	require.ErrorContains(t, err, "rejected 1 spans: too old")

	status.Store(999)
	start := time.Now()
	err = e.ExportSpans(ctx, spansOf(1))
	require.ErrorIs(t, err, tracing.ErrExport)
	require.Less(t, time.Since(start), 5*time.Second, "bounded by the timeout")

	require.NoError(t, e.Shutdown(ctx))
	calls.Store(0)
	require.NoError(t, e.ExportSpans(ctx, spansOf(1)))
	require.Zero(t, calls.Load(), "nothing sent after shutdown")
	require.False(t, errors.Is(nil, tracing.ErrExport))
}
