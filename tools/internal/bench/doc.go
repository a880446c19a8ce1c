// Package bench measures what mcp-resume-guard costs, and holds it to its
// performance budget.
//
// Every figure is taken in two hosts: node's V8 with Envoy's flags (the
// engine Envoy runs plugins in; v8host.js is a proxy-wasm host of our own)
// and the embedded wazero host the tests use (internal/wasmhost). The
// workloads are the same in both: a guarded request, the same request when
// the tombstone table is full, an unguarded request, a resume, and 1 MiB
// event streams.
//
//   - The cost: the guard against a plugin that does nothing (for SSE, one
//     that copies each body chunk out and back), built the same way
//     (plugins/), A/B interleaved; the heap the guard allocates and the GC
//     cycles it runs per 100,000 requests; the cost of one GC cycle; guest
//     memory; compile and VM start times; the .wasm size; shared data per
//     session.
//   - The budget (budget.go): the guard against a baseline build of itself
//     (a commit, built in a git worktree with its own make build, or a
//     .wasm), A/B interleaved: no workload more than 10 % slower in either
//     host, guest memory flat, the .wasm within 4.5 MB, guarded and
//     unguarded requests allocation-free.
//
// A/B interleaved means the two plugins take turns in short blocks (ABBA)
// within each round, and a ratio is the median over the quads of blocks of
// every round: a busy machine slows both sides of a quad alike. Absolute
// times are this machine's.
//
//	w, err := bench.BuildPlugins(ctx, bench.BuildOptions{Dir: "build"})
//	base, name, err := bench.Baseline(ctx, ".", bench.DefaultBaseline, "build", os.Stderr)
//	rep, err := bench.Run(ctx, w, base, bench.DefaultOptions(), true)
//	rep.WriteText(os.Stdout)
//
// The driver is tools/bench (make bench).
package bench
