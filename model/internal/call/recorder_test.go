package call

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/facts"
	"github.com/seed-7cc7a084/harness/model"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "5"}, 5 * time.Second},
		{"seconds with spaces", map[string]string{"Retry-After": " 2 "}, 2 * time.Second},
		{"zero seconds", map[string]string{"Retry-After": "0"}, 0},
		{"negative seconds", map[string]string{"Retry-After": "-1"}, 0},
		{"fractional seconds are not the form", map[string]string{"Retry-After": "1.5"}, 0},
		{"an absurd number of seconds is bounded", map[string]string{"Retry-After": "99999999999999"}, maxRetryAfter},
		{"milliseconds", map[string]string{"retry-after-ms": "250"}, 250 * time.Millisecond},
		{"fractional milliseconds", map[string]string{"Retry-After-Ms": "1.5"}, 1500 * time.Microsecond},
		{"milliseconds win over seconds", map[string]string{"Retry-After-Ms": "100", "Retry-After": "9"}, 100 * time.Millisecond},
		{"bad milliseconds fall back to seconds", map[string]string{"Retry-After-Ms": "soon", "Retry-After": "3"}, 3 * time.Second},
		{"infinite milliseconds fall back", map[string]string{"Retry-After-Ms": "+Inf"}, 0},
		{"a date against now", map[string]string{"Retry-After": date(30 * time.Second)}, 30 * time.Second},
		{"a date against the server's Date", map[string]string{"Date": date(-10 * time.Second), "Retry-After": date(5 * time.Second)}, 15 * time.Second},
		{"a date in the past", map[string]string{"Retry-After": date(-time.Minute)}, 0},
		{"an unreadable Date is ignored", map[string]string{"Date": "yesterday", "Retry-After": date(4 * time.Second)}, 4 * time.Second},
		{"neither a number nor a date", map[string]string{"Retry-After": "later"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			require.Equal(t, tc.want, retryAfter(h, now))
		})
	}
}

// A response is read up to MaxResponseBytes; one byte more fails the
// read with class invalid_output, and the copy kept stops at the bound.
func TestRecorderBoundsTheResponse(t *testing.T) {
	for _, size := range []int{MaxResponseBytes, MaxResponseBytes + 1} {
		r := NewRecorder("test")
		req := httptest.NewRequest(http.MethodPost, "http://model.test/v1", strings.NewReader("{}"))
		res, err := r.Middleware(req, func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{},
				Body: io.NopCloser(io.LimitReader(strings.NewReader(strings.Repeat("x", size)), int64(size)))}, nil
		})
		require.NoError(t, err)
		n, err := io.Copy(io.Discard, res.Body)
		require.EqualValues(t, MaxResponseBytes, n)
		require.Len(t, r.Exchange().Response, MaxResponseBytes)
		if size == MaxResponseBytes {
			require.NoError(t, err)
			continue
		}
		class, ok := model.Classify(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, facts.ClassInvalidOutput, class)
	}
}
