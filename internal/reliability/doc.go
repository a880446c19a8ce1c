// Package reliability proves, through the embedded proxy-wasm host
// (internal/wasmhost) and the built plugin, that mcp-resume-guard stays
// correct under contention between worker VMs, stays bounded under session
// churn, survives garbage collection under Envoy's WASI answers, traps and
// shared-data failures, and handles a catalogue of hostile or broken input
// without a 5xx, a trap, or a changed byte outside SSE id fields.
//
// It holds only tests; they build the plugin once per test binary. The full
// one-million-session churn runs in make bench (tools/internal/bench).
package reliability
