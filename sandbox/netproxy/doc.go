// Package netproxy is the proxy through which a sandboxed command reaches
// the hosts of a network allow-list, and nothing else.
//
// A command whose sandbox has an allow-list has no network of its own (a
// network namespace with only loopback, as without network); the one
// route out is a listening socket on its loopback that the harness, not
// the command, accepts on (package sandbox makes it; see
// sandbox.ProxyPort). What arrives there is served by a [Proxy], in the
// harness's process, outside the sandbox:
//
//   - CONNECT host:port (HTTPS, or any TCP a client tunnels) and plain
//     HTTP with an absolute http:// URL; nothing else.
//   - Only to a host a [Rule] allows: a name ("github.com"), every name
//     under a domain ("*.example.com"), an address ("127.0.0.1"), each
//     with an optional port.
//   - The proxy resolves the name itself and dials the address it
//     resolved, never the name again, and never an address that is
//     loopback, private, link-local, multicast, unspecified or otherwise
//     not on the public internet (see Internal) unless a rule names that
//     very address: a listed name that resolves, or is made to resolve
//     later (DNS rebinding), to 127.0.0.1 or 169.254.169.254 does not
//     reach the harness's own machine or a cloud's metadata service.
//   - A Host header that differs from the CONNECT target or the absolute
//     URL is refused, as is a request with more than one.
//   - A refusal is an HTTP 403 (400 for a malformed request, 502 when an
//     allowed host cannot be reached) whose body says why, so the command
//     sees a clear error.
//
// Every connection, allowed or refused, is kept ([Proxy.Log]): host, port,
// method, verdict, reason, the address dialed and the bytes each way.
package netproxy
