package stock_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/seed-7cc7a084/harness/sandbox/netproxy"
	"github.com/seed-7cc7a084/harness/stock"
)

func TestParseNetworkRule(t *testing.T) {
	for v, want := range map[string]stock.NetworkRule{
		"on":                                 {Kind: stock.NetworkOn},
		"true":                               {Kind: stock.NetworkOn},
		"off":                                {Kind: stock.NetworkOff},
		"false":                              {Kind: stock.NetworkOff},
		"allow=proxy.golang.org,github.com":  {Kind: stock.NetworkAllowList, Allow: []string{"proxy.golang.org", "github.com"}},
		"allow=*.golang.org:443, [::1]:8080": {Kind: stock.NetworkAllowList, Allow: []string{"*.golang.org:443", "[::1]:8080"}},
		"allow=127.0.0.1":                    {Kind: stock.NetworkAllowList, Allow: []string{"127.0.0.1"}},
	} {
		got, err := stock.ParseNetworkRule(v)
		require.NoError(t, err, v)
		require.Equal(t, want, got, v)
		// The spelling reads back as the same rule.
		again, err := stock.ParseNetworkRule(got.Spelling())
		require.NoError(t, err, v)
		require.Equal(t, got, again, v)
	}
	for v, why := range map[string]string{
		"":                       "want on, off or allow=",
		"yes":                    "want on, off or allow=",
		"allow":                  "want on, off or allow=",
		"Allow=github.com":       "want on, off or allow=",
		"allow=":                 "names one host at least",
		"allow= ":                "names one host at least",
		"allow=,":                "host 1 of 2 is empty",
		"allow=github.com,":      "host 2 of 2 is empty",
		"allow=a.com,,b.com":     "host 2 of 3 is empty",
		"allow=http://x":         "not a URL",
		"allow=user@github.com":  "not a URL",
		"allow=*.":               "not a host name",
		"allow=*":                "not a host name",
		"allow=a.*.com":          "not a host name",
		"allow=*.com":            "a wildcard needs a domain",
		"allow=github.com:0":     "the port is not a number from 1 to 65535",
		"allow=github.com:65536": "the port is not a number from 1 to 65535",
		"allow=github.com:+443":  "the port is not a number from 1 to 65535",
		"allow=github.com:x":     "the port is not a number from 1 to 65535",
		"allow=::1":              "goes in brackets",
		"allow=[::1":             "closing bracket",
		"allow=2130706433":       "not a host name",
		"allow=git hub.com":      "not a host name",
		"allow=github.com\x00":   "not a host name",
	} {
		_, err := stock.ParseNetworkRule(v)
		require.ErrorIs(t, err, stock.ErrNetworkRule, v)
		require.ErrorContains(t, err, why, v)
		if errors.Is(err, netproxy.ErrRule) {
			require.ErrorContains(t, err, "allow=", "the error names the value given")
		}
	}
}
