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
// allow=HOSTS (stock.NetworkFlags.Add).
type networkFlag struct{ n *stock.NetworkFlags }

// String is the flag's value as pflag shows a default.
func (f networkFlag) String() string {
	if f.n == nil {
		return ""
	}
	return f.n.Spelling()
}

// Set reads one --network value.
func (f networkFlag) Set(v string) error { return f.n.Add(v) }

// Type names the flag's values in the help.
func (networkFlag) Type() string { return "on|off|allow=HOSTS" }

// addNetworkFlags adds --network and --network-allow, its older spelling
// of an allow-list, to fl.
func addNetworkFlags(fl *pflag.FlagSet, f *driveFlags) {
	fl.Var(networkFlag{&f.network}, "network", networkHelp)
	optional(fl.Lookup("network"))
	fl.StringSliceVar(&f.network.Older, "network-allow", nil, networkAllowHelp)
}

// networkGiven adds the network settings the flags give to given (the
// flags' settings layer, stock.FlagLayer) and returns the allow-list of
// both spellings. An allow-list with --network on or off is a usage
// error.
func (f *driveFlags) networkGiven(given []string) ([]string, []string, error) {
	given, allow, err := f.network.Given(given)
	if err != nil {
		return given, nil, usageError("--network %s and an allow-list (--network allow=%s): give one rule", f.network.Spelling(), strings.Join(slices.Concat(f.network.List, f.network.Older), ","))
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
