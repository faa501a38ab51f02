package tracing

import (
	"encoding/hex"
	"math"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP/JSON encoding of an ExportTraceServiceRequest
// (opentelemetry-proto's trace service, as the OTLP specification's "JSON
// Protobuf Encoding" says): field names in lowerCamelCase, trace and span
// ids in hex (not base64), enums as numbers, 64-bit integers as decimal
// strings. Empty fields are left out, as a proto3 JSON writer does.

type exportRequest struct {
	ResourceSpans []resourceSpans `json:"resourceSpans"`
}

type resourceSpans struct {
	Resource   jsonResource `json:"resource"`
	ScopeSpans []scopeSpans `json:"scopeSpans"`
	SchemaURL  string       `json:"schemaUrl,omitempty"`
}

type jsonResource struct {
	Attributes []keyValue `json:"attributes,omitempty"`
}

type scopeSpans struct {
	Scope     jsonScope  `json:"scope"`
	Spans     []jsonSpan `json:"spans"`
	SchemaURL string     `json:"schemaUrl,omitempty"`
}

type jsonScope struct {
	Name       string     `json:"name,omitempty"`
	Version    string     `json:"version,omitempty"`
	Attributes []keyValue `json:"attributes,omitempty"`
}

type jsonSpan struct {
	TraceID                string      `json:"traceId"`
	SpanID                 string      `json:"spanId"`
	TraceState             string      `json:"traceState,omitempty"`
	ParentSpanID           string      `json:"parentSpanId,omitempty"`
	Flags                  uint32      `json:"flags,omitempty"`
	Name                   string      `json:"name"`
	Kind                   int         `json:"kind,omitempty"`
	StartTimeUnixNano      string      `json:"startTimeUnixNano,omitempty"`
	EndTimeUnixNano        string      `json:"endTimeUnixNano,omitempty"`
	Attributes             []keyValue  `json:"attributes,omitempty"`
	DroppedAttributesCount int         `json:"droppedAttributesCount,omitempty"`
	Events                 []jsonEvent `json:"events,omitempty"`
	DroppedEventsCount     int         `json:"droppedEventsCount,omitempty"`
	Links                  []jsonLink  `json:"links,omitempty"`
	DroppedLinksCount      int         `json:"droppedLinksCount,omitempty"`
	Status                 *jsonStatus `json:"status,omitempty"`
}

type jsonEvent struct {
	TimeUnixNano           string     `json:"timeUnixNano,omitempty"`
	Name                   string     `json:"name"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int        `json:"droppedAttributesCount,omitempty"`
}

type jsonLink struct {
	TraceID                string     `json:"traceId"`
	SpanID                 string     `json:"spanId"`
	TraceState             string     `json:"traceState,omitempty"`
	Attributes             []keyValue `json:"attributes,omitempty"`
	DroppedAttributesCount int        `json:"droppedAttributesCount,omitempty"`
	Flags                  uint32     `json:"flags,omitempty"`
}

type jsonStatus struct {
	Message string `json:"message,omitempty"`
	Code    int    `json:"code,omitempty"`
}

type keyValue struct {
	Key   string   `json:"key"`
	Value anyValue `json:"value"`
}

// anyValue is one of its fields, or none for an empty value.
type anyValue struct {
	StringValue *string     `json:"stringValue,omitempty"`
	BoolValue   *bool       `json:"boolValue,omitempty"`
	IntValue    *string     `json:"intValue,omitempty"`
	DoubleValue any         `json:"doubleValue,omitempty"`
	ArrayValue  *arrayValue `json:"arrayValue,omitempty"`
	KvlistValue *kvList     `json:"kvlistValue,omitempty"`
	BytesValue  []byte      `json:"bytesValue,omitempty"`
}

type arrayValue struct {
	Values []anyValue `json:"values"`
}

type kvList struct {
	Values []keyValue `json:"values"`
}

// The flags bits of a span and a link beside the W3C trace flags (the
// proto's SpanFlags): whether the parent (or the linked span) is remote
// is known, and whether it is.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// OTLP's status codes (its Status.StatusCode, not the SDK's numbering).
const (
	statusOK    = 1
	statusError = 2
)

// encodeSpans is spans as one request: a resourceSpans per resource, a
// scopeSpans per instrumentation scope within it, each in the order its
// first span comes.
func encodeSpans(spans []sdktrace.ReadOnlySpan) exportRequest {
	type scopeKey struct {
		res                   *resource.Resource
		name, version, schema string
		attrs                 attribute.Distinct
	}
	req := exportRequest{ResourceSpans: []resourceSpans{}}
	resIndex := map[*resource.Resource]int{}
	scopeIndex := map[scopeKey]int{}
	for _, s := range spans {
		res := s.Resource()
		ri, ok := resIndex[res]
		if !ok {
			ri = len(req.ResourceSpans)
			resIndex[res] = ri
			rs := resourceSpans{ScopeSpans: []scopeSpans{}}
			if res != nil {
				rs.Resource.Attributes = keyValues(res.Attributes())
				rs.SchemaURL = res.SchemaURL()
			}
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		sc := s.InstrumentationScope()
		k := scopeKey{res, sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		si, ok := scopeIndex[k]
		rs := &req.ResourceSpans[ri]
		if !ok {
			si = len(rs.ScopeSpans)
			scopeIndex[k] = si
			rs.ScopeSpans = append(rs.ScopeSpans, scopeSpans{Scope: scopeOf(sc), SchemaURL: sc.SchemaURL})
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, spanOf(s))
	}
	return req
}

func scopeOf(sc instrumentation.Scope) jsonScope {
	return jsonScope{Name: sc.Name, Version: sc.Version, Attributes: keyValues(sc.Attributes.ToSlice())}
}

func spanOf(s sdktrace.ReadOnlySpan) jsonSpan {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	js := jsonSpan{
		TraceID:                hex.EncodeToString(tid[:]),
		SpanID:                 hex.EncodeToString(sid[:]),
		TraceState:             sc.TraceState().String(),
		Flags:                  flags(sc.TraceFlags(), s.Parent().IsRemote()),
		Name:                   s.Name(),
		Kind:                   kindOf(s.SpanKind()),
		StartTimeUnixNano:      unixNano(s.StartTime().UnixNano()),
		EndTimeUnixNano:        unixNano(s.EndTime().UnixNano()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: s.DroppedAttributes(),
		DroppedEventsCount:     s.DroppedEvents(),
		DroppedLinksCount:      s.DroppedLinks(),
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		pid := p.SpanID()
		js.ParentSpanID = hex.EncodeToString(pid[:])
	}
	if s.StartTime().IsZero() {
		js.StartTimeUnixNano = ""
	}
	if s.EndTime().IsZero() {
		js.EndTimeUnixNano = ""
	}
	for _, e := range s.Events() {
		je := jsonEvent{Name: e.Name, Attributes: keyValues(e.Attributes), DroppedAttributesCount: e.DroppedAttributeCount}
		if !e.Time.IsZero() {
			je.TimeUnixNano = unixNano(e.Time.UnixNano())
		}
		js.Events = append(js.Events, je)
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		js.Links = append(js.Links, jsonLink{
			TraceID:                hex.EncodeToString(ltid[:]),
			SpanID:                 hex.EncodeToString(lsid[:]),
			TraceState:             l.SpanContext.TraceState().String(),
			Attributes:             keyValues(l.Attributes),
			DroppedAttributesCount: l.DroppedAttributeCount,
			Flags:                  flags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()),
		})
	}
	switch st := s.Status(); st.Code {
	case codes.Error:
		js.Status = &jsonStatus{Code: statusError, Message: st.Description}
	case codes.Ok:
		js.Status = &jsonStatus{Code: statusOK}
	}
	return js
}

// flags is the span flags of trace flags tf, saying whether the parent
// (or linked span) is remote.
func flags(tf trace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if remote {
		f |= flagIsRemote
	}
	return f
}

// kindOf is the proto's SpanKind of k: the SDK's numbering is the same,
// 1 internal to 5 consumer; anything else is unspecified (0).
func kindOf(k trace.SpanKind) int {
	if k >= trace.SpanKindInternal && k <= trace.SpanKindConsumer {
		return int(k)
	}
	return 0
}

// unixNano is a fixed64 time as proto3 JSON writes it: a decimal string.
// A time before 1970 is 0.
func unixNano(n int64) string {
	return strconv.FormatUint(uint64(max(n, 0)), 10)
}

func keyValues(kvs []attribute.KeyValue) []keyValue {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]keyValue, len(kvs))
	for i, kv := range kvs {
		out[i] = keyValue{Key: string(kv.Key), Value: valueOf(kv.Value)}
	}
	return out
}

// valueOf is v as an AnyValue: int64s as decimal strings, a float that
// JSON has no number for as proto3 JSON spells it ("NaN", "Infinity",
// "-Infinity"), bytes in base64 (encoding/json's []byte).
func valueOf(v attribute.Value) anyValue {
	switch v.Type() {
	case attribute.BOOL:
		b := v.AsBool()
		return anyValue{BoolValue: &b}
	case attribute.INT64:
		s := strconv.FormatInt(v.AsInt64(), 10)
		return anyValue{IntValue: &s}
	case attribute.FLOAT64:
		return anyValue{DoubleValue: double(v.AsFloat64())}
	case attribute.STRING:
		s := v.AsString()
		return anyValue{StringValue: &s}
	case attribute.BYTESLICE:
		b := v.AsByteSlice()
		if b == nil {
			b = []byte{}
		}
		return anyValue{BytesValue: b}
	case attribute.BOOLSLICE:
		return array(v.AsBoolSlice(), func(b bool) anyValue { return anyValue{BoolValue: &b} })
	case attribute.INT64SLICE:
		return array(v.AsInt64Slice(), func(n int64) anyValue { s := strconv.FormatInt(n, 10); return anyValue{IntValue: &s} })
	case attribute.FLOAT64SLICE:
		return array(v.AsFloat64Slice(), func(f float64) anyValue { return anyValue{DoubleValue: double(f)} })
	case attribute.STRINGSLICE:
		return array(v.AsStringSlice(), func(s string) anyValue { return anyValue{StringValue: &s} })
	case attribute.SLICE:
		return array(v.AsSlice(), valueOf)
	case attribute.MAP:
		return anyValue{KvlistValue: &kvList{Values: append([]keyValue{}, keyValues(v.AsMap())...)}}
	}
	return anyValue{}
}

// double is f as proto3 JSON writes a double.
func double(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// array is xs as an array value, each element by f.
func array[T any](xs []T, f func(T) anyValue) anyValue {
	a := &arrayValue{Values: make([]anyValue, len(xs))}
	for i, x := range xs {
		a.Values[i] = f(x)
	}
	return anyValue{ArrayValue: a}
}
