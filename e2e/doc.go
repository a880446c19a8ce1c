// Package e2e proves the built mcp-resume-guard plugin end to end: the seed
// incident against the reference upstream (package internal/dualstack) that
// has the seed's bug on purpose, first straight to the upstream, then through
// a proxy running the .wasm from `make build`; the same-transport drain race
// under both unacked_cursor policies; clean resumes that must raise no alarm;
// and the official MCP Go SDK clients, which must work through the proxy
// unchanged.
//
// The tests talk only to the proxy's front door and to the upstream's /debug
// hooks, so the same tests run in two places:
//
//   - By default (`make e2e`, `make test`) every test starts, on loopback
//     ports, its own upstream and the embedded proxy-wasm host of
//     internal/wasmhost with 2 VMs ([Start]), and stops them at the end.
//   - With GUARD_PROXY_ADDR set (docker-compose.yaml: Envoy in front of
//     cmd/mcp-dualstack), the tests start nothing and use that proxy,
//     GUARD_UPSTREAM_ADDR for the upstream's /debug hooks and
//     GUARD_ADMIN_ADDR for the counters (Envoy's admin
//     /stats?filter=mcp_resume_guard). Scenarios that need knobs only the
//     embedded host has (a per-scenario plugin configuration, a short stream
//     idle timeout, the VM that served a request, the plugin's log lines)
//     skip those parts, or the whole test, and say why.
//
// Every scenario prints one summary line:
//
//	scenario=<name> silent_losses=<n> tool_runs=<n> reinit=<n>
//
// silent_losses counts tool results that a resume accepted but never
// delivered, tool_runs the executions of the tool during the scenario,
// reinit the forced re-initializations (HTTP 404) the client received.
//
// The replicated topology ([StartReplicas]: guard replicas, each its own
// embedded host and shared data, behind the test front of internal/front)
// prints one line per front policy, unacked_cursor policy and
// unknown_cursor policy, on 3 replicas and on 1 (the control):
//
//	scenario=replicas front=<round_robin|session_hash> unacked_cursor=<rewind|reinit> unknown_cursor=<forward|reinit> replicas=<1|3> drain_races=<n> silent_losses=<n> replayed=<n> reinits=<n> cross_transport_reinit=<n> clean_resumes=<n> false_reinits=<n> tool_runs_per_call=<x> after_clean_end=<n> after_clean_end_reinits=<n>
//
// drain_races are cut after the response and resumed with its ID (replayed:
// the response came on the resume; reinits: refused); clean_resumes are cut
// before the response and resumed with the last notification's ID, as
// clients do (false_reinits: refused); cross_transport_reinit counts the
// seed's resumes refused as cross_transport; tool_runs_per_call is the
// drain races' tool runs per call, the client's call again after a refusal
// included; after_clean_end counts the artificial resumes with a response's
// ID after its stream ended cleanly, which no official client makes.
// Further lines: every replica restarted between streams and their resumes
// (scenario=replica_restart) and a flood of sessions evicting a victim's
// watermarks (scenario=replica_flood).
//
// Against an upstream in the Python SDK's layout (dualstack.LayoutPython:
// tools/call streams closed after their priming event, results fetched by
// GET polls whose replay ends with a fresh priming event), cut after every
// event of the call's streams on 1 replica and on 3 behind round robin,
// TestPythonLayoutCuts prints one line per row:
//
//	scenario=python_layout replicas=<n> front=round_robin chunks=<python|python-one-chunk> session_id_bytes=<n> cut=<stream:event> calls=<n> drain_races=<n> cuts=<n> resumes=<n> same_replica=<n> losses=<n> reinits=<n> delivered_on_resume=<n> tool_runs_per_call=<x>
//
// [Start] is also what cmd/demo runs: the upstream and the embedded proxy
// with the plugin, in-process. TestTrialProxySDKClients runs the SDK clients
// through what `make run` starts instead (package internal/trial configured
// by envoy/envoy.yaml), reading its counters from its Envoy-format admin.
package e2e
