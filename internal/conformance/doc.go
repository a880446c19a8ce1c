// Package conformance runs the official MCP conformance suite (the npm
// package @modelcontextprotocol/conformance, pinned with the node it needs
// by package.json and package-lock.json beside this file) against the
// guard, as `make conformance` and so `make test` do:
//
//   - server side: every active and pending server scenario against the Go
//     SDK's conformance server (its module's conformance/everything-server,
//     stateful), once directly and once through the trial proxy
//     (internal/trial: the built .wasm in the embedded host, configured by
//     envoy/envoy.yaml); both runs must give every check the same status;
//   - client side: the scenarios initialize, tools_call,
//     elicitation-sep1034-client-defaults and sse-retry with the Go SDK's
//     conformance/everything-client, directly and through the trial proxy,
//     which must pass.
//
// The test prints one CONFORMANCE line per scenario and mode. The package
// has no code outside its tests: the guarded client is the test binary
// itself, started by the suite's CLI (see TestMain).
package conformance
