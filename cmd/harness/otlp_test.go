package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdOTLPCollect starts an OTLP/HTTP collector for the script: it sets
// OTEL_EXPORTER_OTLP_ENDPOINT to it, and appends each request it gets to
// FILE as a line: the method, path and Content-Type, then the body.
// Usage: otlpcollect FILE
func cmdOTLPCollect(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: otlpcollect FILE")
	}
	file := ts.MkAbs(args[0])
	var mu sync.Mutex // guards appends to file
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			_, _ = f.WriteString(r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type") + " " + string(body) + "\n")
			_ = f.Close()
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	ts.Defer(srv.Close)
	ts.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
}
