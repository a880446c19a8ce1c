// Package wasmhost is a proxy-wasm ABI 0.2.1 host for HTTP filters, on
// wazero, that behaves like Envoy 1.33–1.38 wherever Envoy's behaviour is
// documented. It runs the built mcp-resume-guard plugin in tests and in the
// embedded proxy (cmd/guardproxy); production runs in Envoy.
//
// # Using it
//
//	h, err := wasmhost.New(ctx, wasmhost.Options{
//		Wasm:         wasmBytes,        // a WASI reactor exporting _initialize
//		PluginConfig: configJSON,       // PLUGIN_CONFIGURATION for proxy_on_configure
//		VMs:          2,                // like Envoy worker threads
//		Logger:       slog.Default(),   // proxy_log, fd_write and host messages
//	})
//	defer h.Close(ctx)
//
//	// Without HTTP: one exchange through the plugin.
//	res, err := h.Simulate(wasmhost.Exchange{
//		Info:     wasmhost.StreamInfo{RouteName: "mcp-streamable"},
//		Request:  wasmhost.Headers{{":method", "GET"}, {":path", "/mcp"}, ...},
//		Response: wasmhost.Headers{{":status", "200"}, ...},
//		ResponseBody: [][]byte{[]byte("id: e-1\ndata: {}\n\n")},
//	})
//
//	// Step by step (what the proxy does): h.NewStream, then
//	// OnRequestHeaders, OnRequestBody, LocalReply/RunLocalReply,
//	// OnResponseHeaders, OnResponseBody, Finish(reason), Release.
//
//	// As an HTTP/1.1 reverse proxy with streaming bodies:
//	p := wasmhost.NewProxy(h, upstreamURL, wasmhost.ProxyOptions{
//		Routes:            []wasmhost.Route{{PathPrefix: "/mcp", RouteName: "mcp-streamable"}},
//		StreamIdleTimeout: 5 * time.Second,
//	})
//	http.ListenAndServe(addr, p)
//
// Observability for tests: Host.Metrics / Metric (plugin metrics by name),
// Host.Stats (streams, traps, restarts, local replies, per-VM requests and
// memory), Host.SharedData (a snapshot of the store), Host.StatsText,
// Host.PrometheusText and AdminHandler (Envoy's /stats, /stats/prometheus and
// /ready, in Envoy's formats), Options.Trace (every guest
// callback with VM and context id), ProxyOptions.OnDone (one StreamRecord per
// request with its VM, status, end reason and flags), and the x-guard-vm
// response header naming the VM. Host.SetSharedDataFault makes shared-data
// calls fail with INTERNAL_FAILURE; ProxyOptions.Fault cuts a response
// stream after N SSE events or bytes, or right after its first JSON-RPC
// result event, the way an idle timeout severs it.
//
// # What follows Envoy
//
//   - Start-up: _initialize (or _start), then proxy_on_context_create(root=1,
//     0), proxy_on_vm_start with VM_CONFIGURATION, proxy_on_configure with
//     PLUGIN_CONFIGURATION; false from either fails New. Stream context ids
//     start at 2 per VM and are never reused.
//   - End of every stream, clean or reset: proxy_on_log, then proxy_on_done,
//     then proxy_on_delete (Envoy's order; the spec's is the other way
//     round). A downstream disconnect sets response.flags DC (0x4000) and
//     response.code_details downstream_remote_disconnect; a stream idle
//     timeout SI (0x10000) and stream_idle_timeout (408 before the response
//     started, a reset after). Header maps are readable again in the log
//     phase. The proxy is HTTP/1.1 only, so a client that goes away sets DC,
//     as Envoy does for a closed HTTP/1 connection; DR (0x10000000,
//     downstream remote reset) belongs to HTTP/2 and HTTP/3 stream resets
//     and is never set here.
//   - WASI: exactly the 18 functions of Envoy 1.33–1.38 (poll_oneoff → 52,
//     fd_prestat_get → 8, fd_fdstat_set_flags → 52, no args or environment,
//     fd_write to the log at info/error, clock_time_get for realtime and
//     monotonic only). A module importing another WASI function does not
//     load. During _initialize only proxy_log, fd_write, args_*, environ_*,
//     fd_prestat_get, fd_prestat_dir_name, clock_time_get, random_get,
//     fd_fdstat_get and fd_fdstat_set_flags may be called, during
//     proxy_on_memory_allocate only proxy_log, fd_write and clock_time_get;
//     anything else traps (RestrictedCallError, Envoy's restricted_callback).
//     Options.FullWASI offers wazero's complete wasi_snapshot_preview1
//     instead (Envoy ≥ 1.39); the proxy_* restrictions stay.
//   - Header maps: the proxy-wasm serialization, lowercase keys,
//     pseudo-headers first; get returns the first value, remove of an absent
//     key is OK; after a headers callback returned Continue its map answers
//     BAD_ARGUMENT until the log phase; an empty map is returned as (0, 0).
//     In the log phase the maps are read-only (writes are BAD_ARGUMENT) and a
//     map that never existed (no response yet) is NOT_FOUND.
//   - Bodies chunk by chunk; proxy_set_buffer_bytes start 0 drains size
//     then prepends, start ≥ length appends, else BAD_ARGUMENT; Pause
//     buffers, and the next call's body_size covers the accumulated body.
//   - proxy_send_local_response: sent when the callback returns, the
//     upstream is never contacted, details' whitespace becomes '_', and the
//     reply runs through this plugin's response callbacks (:status, the
//     plugin's headers, content-length and content-type text/plain when the
//     body is not empty). The host's own replies (503 upstream failure, 408
//     idle timeout) pass through the callbacks the same way.
//   - Shared data: cas 0 writes unconditionally, a new key ignores cas, every
//     write gets a new non-zero cas, a stale cas is CAS_MISMATCH; shared by
//     all VMs; no delete, no expiry. (So two VMs that both read a missing key
//     and write it both succeed: CAS only guards keys that exist.)
//   - Metrics: shared by name across VMs; a counter increment ≤ 0 is
//     BAD_ARGUMENT; histograms cannot be incremented or read.
//   - proxy_http_call answers BAD_ARGUMENT and the gRPC calls PARSE_FAILURE,
//     as Envoy does for an unknown cluster (no clusters exist here).
//   - Properties: xds.route_name (route_name is NOT_FOUND, removed in Envoy
//     1.33), request.path/url_path/query/method/host/scheme/protocol/id/
//     headers, response.code (NOT_FOUND until a response exists)/
//     code_details/flags/headers, connection.termination_details,
//     source.address, destination.address, upstream.address,
//     plugin_root_id, plugin_name, plugin_vm_id, and Options.Properties.
//   - Each VM's memory is capped at 1 GiB, like V8 in Envoy.
//
// # Where it differs, and why
//
//   - A second local reply while the first one runs through the response
//     callbacks hangs the stream in Envoy (envoyproxy/envoy#28826). This host
//     refuses it: proxy_send_local_response returns INTERNAL_FAILURE, a warn
//     line is logged and Stats.RefusedReplies counts it; the first reply is
//     sent. A local reply from proxy_on_response_headers of an upstream
//     response replaces it and is sent without running the callbacks again;
//     after the response started, a local reply resets the stream.
//   - A trap (or a Go panic, or proc_exit, which Envoy only logs) fails the
//     request: 500 if nothing was sent yet, a reset otherwise. The trap is
//     counted and the VM is re-instantiated at once (Envoy marks the VM
//     failed and acts on failure_policy); streams still open on the old
//     instance fail with ErrVMRestarted.
//   - The request body is read through proxy_on_request_body completely
//     before the upstream is contacted (Envoy streams it). The reverse
//     proxy never delivers trailers; a test can end a Stream's response with
//     them (Stream.OnResponseTrailers).
//   - Pause at end_of_stream forwards the buffered body and logs a warning
//     (Envoy would wait for proxy_continue_stream). Pause on headers waits
//     for proxy_continue_stream (from a tick) or the end of the stream.
//   - proxy_on_done's result is ignored and proxy_done answers NOT_FOUND, as
//     Envoy ignores it when a stream is destroyed. Shared queues answer
//     UNIMPLEMENTED.
//
// # Cost
//
// Host functions are stack-based (wazero WithGoModuleFunction), wazero's
// optimizing compiler runs the module, and a stream allocates nothing in the
// steady state (streams are pooled). See bench_test.go: a module without a
// language runtime measures the host alone (context create, request and
// response headers, log, done, delete).
package wasmhost
