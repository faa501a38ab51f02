package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdHTTPServe starts an HTTP server on 127.0.0.1 for the rest of the
// script, answering "hello NAME", and writes its port to FILE:
// httpserve NAME FILE.
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpserve NAME FILE")
	}
	name := args[0]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s\n", name)
	}))
	ts.Defer(srv.Close)
	u, _ := url.Parse(srv.URL)
	if err := os.WriteFile(ts.MkAbs(args[1]), []byte(u.Port()), 0o644); err != nil {
		ts.Fatalf("httpserve: %v", err)
	}
}
