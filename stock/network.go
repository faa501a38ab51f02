package stock

import (
	"slices"

	"github.com/seed-7cc7a084/harness/sandbox"
)

// The kinds of NetworkRule.
const (
	// NetworkOff: commands have no network but their own loopback.
	NetworkOff = "off"
	// NetworkOn: commands use the network as the user can.
	NetworkOn = "on"
	// NetworkAllowList: commands reach only the allow-list's hosts,
	// through the harness's proxy.
	NetworkAllowList = "allow-list"
)

// NetworkRule is the network commands get, as settings say it.
type NetworkRule struct {
	// Kind is NetworkOff, NetworkOn or NetworkAllowList.
	Kind string
	// Allow is the allow-list of NetworkAllowList.
	Allow []string
}

// NetworkRuleOf is the network s gives commands: an allow-list when
// "network_allow" holds one (whatever "network" says: a layer that turns
// the network on without a list drops a weaker layer's list in the
// merge), else on or off as "network" says.
func NetworkRuleOf(s Settings) NetworkRule {
	switch {
	case len(s.NetworkAllow) > 0:
		return NetworkRule{Kind: NetworkAllowList, Allow: slices.Clone(s.NetworkAllow)}
	case s.Network:
		return NetworkRule{Kind: NetworkOn}
	}
	return NetworkRule{Kind: NetworkOff}
}

// Within reports whether every host r reaches, cur reaches too: nothing
// is within off but off; everything is within on; a list is within a list
// whose rules cover each of its own (see netproxy.Rule.Covers).
func (r NetworkRule) Within(cur NetworkRule) bool {
	switch {
	case r.Kind == NetworkOff || cur.Kind == NetworkOn:
		return true
	case r.Kind == NetworkOn || cur.Kind == NetworkOff:
		return false
	}
	return sandbox.AllowWithin(r.Allow, cur.Allow)
}

// String says the rule: "off", "on", or "allow-list: a, b".
func (r NetworkRule) String() string {
	if r.Kind == NetworkAllowList {
		s := r.Kind + ": "
		for i, a := range r.Allow {
			if i > 0 {
				s += ", "
			}
			s += a
		}
		return s
	}
	return r.Kind
}

// WithNetworkAllow gives commands the allow-list's proxy as their only
// network (sandbox.Spec.NetworkAllow), unless WithNetwork gave them the
// network.
func WithNetworkAllow(allow []string) Option {
	return func(o *stockOptions) { o.networkAllow = slices.Clone(allow) }
}

// NetworkView is the network rule in force and where each of its hosts
// comes from, as harness config shows it.
type NetworkView struct {
	// Rule is NetworkOff, NetworkOn or NetworkAllowList.
	Rule string `json:"rule"`
	// Spelling is the rule as a person writes it (NetworkRule.Spelling):
	// "on", "off" or "allow=a,b".
	Spelling string `json:"spelling"`
	// Allow are the allow-list's entries in force, each with the layer
	// that gave it.
	Allow []AllowSource `json:"allow,omitempty"`
	// Ignored are entries a layer gives that are not in force because the
	// layer is not trusted and they would widen the rule.
	Ignored []AllowSource `json:"ignored,omitempty"`
}

// AllowSource is one allow-list entry and the layer that gives it.
type AllowSource struct {
	Host  string `json:"host"`
	Scope Scope  `json:"scope"`
	Path  string `json:"path,omitempty"`
}

// NetworkView says the network rule of l's settings and, for an
// allow-list, which layer gave each entry; and the entries of untrusted
// layers left out.
func (l Layered) NetworkView() NetworkView {
	rule := NetworkRuleOf(l.Settings)
	v := NetworkView{Rule: rule.Kind, Spelling: rule.Spelling()}
	var from *SettingsSource
	for i := range l.Sources {
		s := &l.Sources[i]
		if slices.Contains(s.Applied, "network_allow") {
			from = s
		}
		if slices.Contains(s.Ignored, "network_allow") {
			for _, h := range s.Settings.NetworkAllow {
				if !slices.Contains(rule.Allow, h) {
					v.Ignored = append(v.Ignored, AllowSource{Host: h, Scope: s.Scope, Path: s.Path})
				}
			}
		}
	}
	if rule.Kind == NetworkAllowList && from != nil {
		for _, h := range rule.Allow {
			v.Allow = append(v.Allow, AllowSource{Host: h, Scope: from.Scope, Path: from.Path})
		}
	}
	return v
}
