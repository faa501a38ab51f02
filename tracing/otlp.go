package tracing

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// defaultTimeout bounds one export, its retries included, when
// OTEL_EXPORTER_OTLP_TIMEOUT does not say.
const defaultTimeout = 10 * time.Second

// maxResponse bounds the part of a collector's answer that is read.
const maxResponse = 64 << 10

// OTLPExporter sends spans to an OTLP/HTTP collector in the JSON encoding
// (Content-Type application/json), the encoding the OTLP specification
// lets a client choose over protobuf. A 429, 502, 503 or 504 is retried,
// after the collector's Retry-After if it gives one, until the export's
// timeout; another status is an error wrapping ErrExport.
type OTLPExporter struct {
	url      string
	client   *http.Client
	headers  map[string]string
	gzip     bool
	timeout  time.Duration
	mu       sync.Mutex // guards stopped
	stopped  bool
	sleepFor func(context.Context, time.Duration) error
}

// NewOTLPExporter is an exporter to the traces URL endpoint (used as it
// is: a base URL's /v1/traces is Setup's to add), configured by the
// OTEL_EXPORTER_OTLP_* variables lookupEnv gives (see Setup; nil is
// os.LookupEnv), then by opts (WithHTTPClient, WithHeaders).
func NewOTLPExporter(endpoint string, lookupEnv func(string) (string, bool), opts ...Option) (*OTLPExporter, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	c := config{lookupEnv: lookupEnv}
	for _, o := range opts {
		o(&c)
	}
	return newOTLPExporter(endpoint, c)
}

func newOTLPExporter(endpoint string, c config) (*OTLPExporter, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q: want an http:// or https:// URL", ErrSetting, endpoint)
	}
	// The traces variable wins over the general one.
	env := func(name string) string {
		if v, ok := c.lookupEnv("OTEL_EXPORTER_OTLP_TRACES_" + name); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
		v, _ := c.lookupEnv("OTEL_EXPORTER_OTLP_" + name)
		return strings.TrimSpace(v)
	}
	e := &OTLPExporter{url: u.String(), headers: map[string]string{}, timeout: defaultTimeout, sleepFor: sleep}
	if v := env("HEADERS"); v != "" {
		if e.headers, err = parseHeaders(v); err != nil {
			return nil, err
		}
	}
	for k, v := range c.headers {
		e.headers[k] = v
	}
	if v := env("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_TIMEOUT %q: want milliseconds, more than 0", ErrSetting, v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch v := strings.ToLower(env("COMPRESSION")); v {
	case "", "none":
	case "gzip":
		e.gzip = true
	default:
		return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_COMPRESSION %q: want gzip or none", ErrSetting, v)
	}
	e.client = c.client
	if e.client == nil {
		tlsConf, err := tlsConfig(env("CERTIFICATE"), env("CLIENT_CERTIFICATE"), env("CLIENT_KEY"))
		if err != nil {
			return nil, err
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = tlsConf
		e.client = &http.Client{Transport: tr}
	}
	return e, nil
}

// parseHeaders reads OTEL_EXPORTER_OTLP_HEADERS: key=value pairs split by
// commas, each value URL-decoded (the W3C baggage format the
// specification names).
func parseHeaders(v string) (map[string]string, error) {
	h := map[string]string{}
	for pair := range strings.SplitSeq(v, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n:") {
			return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_HEADERS: want key=value pairs split by commas", ErrSetting)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil || strings.ContainsAny(dec, "\r\n") {
			return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_HEADERS: the value of %q is not URL-encoded text of one line", ErrSetting, k)
		}
		h[k] = dec
	}
	return h, nil
}

// tlsConfig is the TLS configuration the certificate files name: a CA
// bundle to trust instead of the system's, and a client certificate and
// key (both or neither). Nil when none is named.
func tlsConfig(ca, cert, key string) (*tls.Config, error) {
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_CERTIFICATE: %w", ErrSetting, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_CERTIFICATE %s: no PEM certificate in it", ErrSetting, ca)
		}
		conf.RootCAs = pool
	}
	if cert != "" || key != "" {
		if cert == "" || key == "" {
			return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together", ErrSetting)
		}
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: %w", ErrSetting, err)
		}
		conf.Certificates = []tls.Certificate{pair}
	}
	return conf, nil
}

// ExportSpans sends spans in one request, retrying as the type says
// within the export's timeout. After Shutdown it sends nothing.
func (e *OTLPExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped || len(spans) == 0 {
		return nil
	}
	body, err := json.Marshal(encodeSpans(spans))
	if err != nil {
		return fmt.Errorf("%w: encoding %d spans: %w", ErrExport, len(spans), err)
	}
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("%w: %w", ErrExport, err)
		}
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	wait := 100 * time.Millisecond
	for {
		retry, after, err := e.send(ctx, body)
		if err == nil || !retry {
			return err
		}
		if after <= 0 {
			after, wait = wait, min(2*wait, 5*time.Second)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < after {
			return fmt.Errorf("%w (no time left to retry within %v)", err, e.timeout)
		}
		if serr := e.sleepFor(ctx, after); serr != nil {
			return err
		}
	}
}

// send posts body once: retry says whether the collector asked for it
// again later (after, when it said how long).
func (e *OTLPExporter) send(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, fmt.Errorf("%w: %w", ErrExport, err)
	}
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// A collector not reached: worth another try while time is left.
		return ctx.Err() == nil, 0, fmt.Errorf("%w: %w", ErrExport, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		var r struct {
			PartialSuccess struct {
				RejectedSpans json.Number `json:"rejectedSpans"`
				ErrorMessage  string      `json:"errorMessage"`
			} `json:"partialSuccess"`
		}
		if json.Unmarshal(answer, &r) == nil {
			if n, _ := r.PartialSuccess.RejectedSpans.Int64(); n > 0 {
				return false, 0, fmt.Errorf("%w: the collector rejected %d spans: %s", ErrExport, n, r.PartialSuccess.ErrorMessage)
			}
		}
		return false, 0, nil
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode == http.StatusBadGateway,
		resp.StatusCode == http.StatusServiceUnavailable, resp.StatusCode == http.StatusGatewayTimeout:
		var after time.Duration
		if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s >= 0 {
			after = time.Duration(s) * time.Second
		}
		return true, after, fmt.Errorf("%w: %s answered %s", ErrExport, e.url, resp.Status)
	}
	return false, 0, fmt.Errorf("%w: %s answered %s: %s", ErrExport, e.url, resp.Status, oneLine(answer))
}

// oneLine is the start of a collector's answer, on one line.
func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strconv.Quote(s)
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Shutdown stops the exporter: later exports send nothing.
func (e *OTLPExporter) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	e.client.CloseIdleConnections()
	return ctx.Err()
}
