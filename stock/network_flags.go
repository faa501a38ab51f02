package stock

import (
	"fmt"
	"slices"
	"strings"
)

// NetworkFlags are the network rules one command line gives: each
// --network value (on, off or allow=HOSTS: the hosts of every
// allow-list add up) and the hosts of the older spelling of an
// allow-list. The rule is one or the other: on or off with an
// allow-list is ErrNetworkBoth.
type NetworkFlags struct {
	// On: the rule said is on (Said: on or off was said).
	On, Said bool
	// List are the hosts of the allow-lists given as rules; Older those
	// of the older spelling, which Add does not read.
	List, Older []string
}

// Add reads one rule (ParseNetworkRule).
func (n *NetworkFlags) Add(v string) error {
	r, err := ParseNetworkRule(v)
	if err != nil {
		return err
	}
	if r.Kind != NetworkAllowList {
		if len(n.List) > 0 {
			return ErrNetworkBoth
		}
		n.On, n.Said = r.Kind == NetworkOn, true
		return nil
	}
	if n.Said {
		return ErrNetworkBoth
	}
	n.List = append(n.List, r.Allow...)
	return nil
}

// Spelling is the rule the values Add read give, as ParseNetworkRule
// reads it: allow=HOSTS, on or off.
func (n NetworkFlags) Spelling() string {
	if len(n.List) > 0 {
		return NetworkRule{Kind: NetworkAllowList, Allow: n.List}.Spelling()
	}
	if n.On {
		return NetworkOn
	}
	return NetworkOff
}

// Given adds the settings keys the rules set to given (a flag layer's
// keys, FlagLayer) and returns the allow-list of both spellings. On or
// off with an allow-list of either spelling is ErrNetworkBoth.
func (n NetworkFlags) Given(given []string) ([]string, []string, error) {
	allow := slices.Concat(n.List, n.Older)
	if n.Said && len(allow) > 0 {
		return given, nil, fmt.Errorf("%w: %s and allow=%s", ErrNetworkBoth, n.Spelling(), strings.Join(allow, ","))
	}
	if n.On {
		given = append(given, "network")
	}
	if len(n.List) > 0 {
		given = append(given, "network_allow")
	}
	return given, allow, nil
}
