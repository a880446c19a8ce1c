// Package cursor is the heart of mcp-resume-guard: transport-tagged SSE event
// IDs, the per-session watermark record kept in proxy-wasm shared data, and
// the resume decision of docs/how-it-decides.md.
//
// It is pure Go and never imports the proxy-wasm SDK, so every rule can be
// tested without a host. The plugin (package filter) only moves bytes between
// the host and the functions here.
package cursor
