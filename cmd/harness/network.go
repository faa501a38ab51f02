package main

import (
	"errors"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/seed-7cc7a084/harness/stock"
)

// networkHelp is --network's help on the commands that run threads.
const networkHelp = "the network commands get, a `RULE`: on (the network as you can use it), off (none but their own loopback), or allow=HOST[,HOST...] — " +
	"no network but an HTTP(S) proxy the harness runs (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) that reaches only these hosts: " +
	"github.com, *.example.com (names under it), proxy.golang.org:443, 127.0.0.1:8080 (a loopback or private address only when named so); " +
	"every connection is recorded. --network alone is on; --network allow=a,b may be repeated (default: the settings' \"network\" and \"network_allow\")"

// networkAllowHelp is --network-allow's help: the older spelling of
// --network allow=.
const networkAllowHelp = "the same as --network allow=`HOSTS`: comma-separated or repeated"

// networkFlag is --network on a command that runs threads: on, off or
// allow=HOSTS (stock.ParseNetworkRule). It sets f.network for on and
// off, and adds an allow-list's hosts to f.networkList.
type networkFlag struct{ f *driveFlags }

// String is the flag's value as pflag shows a default.
func (n networkFlag) String() string {
	if n.f == nil {
		return ""
	}
	if len(n.f.networkList) > 0 {
		return stock.NetworkRule{Kind: stock.NetworkAllowList, Allow: n.f.networkList}.Spelling()
	}
	if n.f.network {
		return stock.NetworkOn
	}
	return stock.NetworkOff
}

// Set reads one --network value. Saying on or off and an allow-list on
// one command line is refused: the rule would be one or the other.
func (n networkFlag) Set(v string) error {
	r, err := stock.ParseNetworkRule(v)
	if err != nil {
		return err
	}
	f := n.f
	if r.Kind != stock.NetworkAllowList {
		if len(f.networkList) > 0 {
			return errNetworkBoth
		}
		f.network, f.networkSaid = r.Kind == stock.NetworkOn, true
		return nil
	}
	if f.networkSaid {
		return errNetworkBoth
	}
	f.networkList = append(f.networkList, r.Allow...)
	return nil
}

// Type names the flag's values in the help.
func (networkFlag) Type() string { return "on|off|allow=HOSTS" }

// errNetworkBoth: --network on or off and an allow-list, together.
var errNetworkBoth = errors.New("on or off and allow=HOSTS together: give one rule")

// addNetworkFlags adds --network and --network-allow, its older spelling
// of an allow-list, to fl.
func addNetworkFlags(fl *pflag.FlagSet, f *driveFlags) {
	fl.Var(networkFlag{f}, "network", networkHelp)
	optional(fl.Lookup("network"))
	fl.StringSliceVar(&f.networkAllow, "network-allow", nil, networkAllowHelp)
}

// networkGiven adds the network settings the flags give to given (the
// flags' settings layer, stock.FlagLayer) and returns the allow-list of
// both spellings. An allow-list with --network on or off is a usage
// error.
func (f *driveFlags) networkGiven(given []string) ([]string, []string, error) {
	allow := slices.Concat(f.networkList, f.networkAllow)
	if f.networkSaid && len(allow) > 0 {
		return given, nil, usageError("--network %s and an allow-list (--network allow=%s): give one rule", networkFlag{f}.String(), strings.Join(allow, ","))
	}
	if f.network {
		given = append(given, "network")
	}
	if len(f.networkList) > 0 {
		given = append(given, "network_allow")
	}
	return given, allow, nil
}

// mcpNetworkFlag is --network of the commands that start MCP servers:
// on or off (a local server has no allow-list).
type mcpNetworkFlag struct{ on *bool }

// String is the flag's value as pflag shows a default.
func (m mcpNetworkFlag) String() string {
	if m.on != nil && *m.on {
		return stock.NetworkOn
	}
	return stock.NetworkOff
}

// Set reads on or off; an allow-list is refused.
func (m mcpNetworkFlag) Set(v string) error {
	r, err := stock.ParseNetworkRule(v)
	if err != nil {
		return err
	}
	if r.Kind == stock.NetworkAllowList {
		return errMCPAllowList
	}
	*m.on = r.Kind == stock.NetworkOn
	return nil
}

// Type names the flag's values in the help.
func (mcpNetworkFlag) Type() string { return "on|off" }

// errMCPAllowList: --network allow= on a command that starts MCP servers.
var errMCPAllowList = errors.New("a local MCP server's network is on or off (an allow-list is for the commands a thread runs: harness run --network allow=HOSTS)")

// addMCPNetworkFlag adds --network (on or off) to fl.
func addMCPNetworkFlag(fl *pflag.FlagSet, on *bool) {
	fl.Var(mcpNetworkFlag{on}, "network", "let local servers use the network: `RULE` on or off (--network alone is on; default off, or a server's own \"network\": true)")
	optional(fl.Lookup("network"))
}

// optional makes --network's value optional (alone it is on) and shows
// no default in the help, which says where the default comes from.
func optional(fl *pflag.Flag) {
	fl.NoOptDefVal, fl.DefValue = stock.NetworkOn, ""
}

// joinNetworkValue is args with "--network VALUE" joined into
// "--network=VALUE" when VALUE is a network rule's spelling (on, off or
// allow=...), as the flag is spelled with a space; a flag whose value is
// optional otherwise takes only the "=" form. Arguments after "--" are
// left alone.
func joinNetworkValue(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if a == "--network" && i+1 < len(args) {
			next := args[i+1]
			if next == stock.NetworkOn || next == stock.NetworkOff || strings.HasPrefix(next, "allow=") {
				out = append(out, a+"="+next)
				i++
				continue
			}
		}
		out = append(out, a)
	}
	return out
}
