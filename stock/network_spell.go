package stock

import (
	"fmt"
	"strings"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// allowPrefix begins the spelling of an allow-list rule.
const allowPrefix = "allow="

// ParseNetworkRule reads a network rule as a person spells it: "on" (or
// "true"), "off" (or "false"), or "allow=HOST[,HOST...]", each HOST an
// allow-list rule (see netproxy.ParseRule). An empty list, an empty host
// (a stray comma) or a host that is not a rule is an error wrapping
// ErrNetworkRule that names the bad host; nothing else is read.
func ParseNetworkRule(v string) (NetworkRule, error) {
	switch v {
	case NetworkOn, "true":
		return NetworkRule{Kind: NetworkOn}, nil
	case NetworkOff, "false":
		return NetworkRule{Kind: NetworkOff}, nil
	}
	list, ok := strings.CutPrefix(v, allowPrefix)
	if !ok {
		return NetworkRule{}, fmt.Errorf("%w %q: want on, off or allow=HOST[,HOST...]", ErrNetworkRule, v)
	}
	if strings.TrimSpace(list) == "" {
		return NetworkRule{}, fmt.Errorf("%w %q: an allow-list names one host at least (allow=github.com,proxy.golang.org)", ErrNetworkRule, v)
	}
	hosts := strings.Split(list, ",")
	for i, h := range hosts {
		h = strings.TrimSpace(h)
		if h == "" {
			return NetworkRule{}, fmt.Errorf("%w %q: host %d of %d is empty (a stray comma)", ErrNetworkRule, v, i+1, len(hosts))
		}
		if err := sandbox.CheckAllow([]string{h}); err != nil {
			return NetworkRule{}, fmt.Errorf("%w %q: %w", ErrNetworkRule, v, err)
		}
		hosts[i] = h
	}
	return NetworkRule{Kind: NetworkAllowList, Allow: hosts}, nil
}

// Spelling is the rule as ParseNetworkRule reads it: "on", "off" or
// "allow=a,b".
func (r NetworkRule) Spelling() string {
	if r.Kind == NetworkAllowList {
		return allowPrefix + strings.Join(r.Allow, ",")
	}
	return r.Kind
}
