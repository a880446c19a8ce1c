// Package refplugins holds the reference plugins: proxy-wasm plugins other
// than the guard, built exactly like it from this module (the same
// toolchain, SDK, ABI glue and runtime patch), so that what is measured
// against one is the guard's own work or a property of every such build.
// passthrough and passthroughcopy are make bench's baselines
// (tools/internal/bench); gcprobe is the garbage collection probe of make
// bench and of internal/reliability; leak is the plugin whose growing
// memory the soak's test must see (tools/internal/soak).
package refplugins
