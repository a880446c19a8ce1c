// Package bench measures mcp-resume-guard side by side with baseline plugins
// built the same way, inside one process, through the embedded proxy-wasm
// host (internal/wasmhost): the per-request and per-resume overhead against a
// do-nothing plugin, SSE throughput against a plugin that only copies each
// body chunk out and back, and against a floor plugin that makes only the
// host calls the guard cannot do without; unguarded requests against the
// do-nothing plugin; the native SSE rewriter against copy(), guest
// memory growth, shared-data size per session and after session churn, and
// also the .wasm size and V8 compile time against the do-nothing plugin, VM start-up, the cost of a GC cycle inside a VM (a
// probe plugin), GC survival of the guard under Envoy 1.33–1.38's WASI, and
// the guest time per callback.
//
// Ratios are medians of several rounds in which the two plugins run
// alternately (A/B interleaved), so that a noisy machine slows both sides of
// a round alike. Absolute times are only indicative.
//
//	wasm, err := bench.BuildPlugins(ctx, bench.BuildOptions{Dir: "build"})
//	rep, err := bench.Run(ctx, wasm, bench.DefaultOptions())
//	rep.WriteText(os.Stdout)   // every figure, with the method
//	rep.WriteBench(os.Stdout)  // one BENCH name=value line per figure
//
// The driver is internal/tools/bench (make bench).
package bench
