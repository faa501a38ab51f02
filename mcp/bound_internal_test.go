package mcp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// A remote server's response is read up to MaxResponseBytes: exactly that
// much is fine, one byte more fails the read.
func TestResponseIsBounded(t *testing.T) {
	for _, tc := range []struct {
		size int
		fail bool
	}{{10, false}, {MaxResponseBytes, false}, {MaxResponseBytes + 1, true}} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.Copy(w, io.LimitReader(zeros{}, int64(tc.size)))
		}))
		hc := &http.Client{Transport: headers{map[string]string{"X-A": "b"}, http.DefaultTransport}}
		res, err := hc.Get(srv.URL)
		require.NoError(t, err)
		n, err := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		srv.Close()
		if tc.fail {
			require.ErrorContains(t, err, "response is over")
			require.EqualValues(t, MaxResponseBytes, n)
			continue
		}
		require.NoError(t, err)
		require.EqualValues(t, tc.size, n)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }
