//go:build wasip1 && abiglue

package internal

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"

// Guest callbacks of the proxy-wasm ABI 0.2.1, exported with //go:wasmexport.
// Each wrapper converts the ABI's i32 values (sizes, booleans) to the types
// the SDK's own callback functions take and calls them; the SDK's //export
// comments mean nothing to the standard toolchain. The callbacks of HTTP
// contexts go to the glue's table of them instead (abiglue_contexts.go).
//
// Each callback runs between enter and leave, which rewind the arena of host
// buffers when the outermost callback starts (abiglue_memory.go). A panic
// escaping a callback aborts the whole VM, so leave needs no defer.

// b2u encodes a Go bool as the ABI's i32 boolean.
func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// abiVersion marks the module as speaking ABI 0.2.1, the version whose host
// functions abiglue_hostcalls.go imports.
//
//go:wasmexport proxy_abi_version_0_2_1
func abiVersion() {}

//go:wasmexport proxy_on_context_create
func abiOnContextCreate(contextID, parentContextID uint32) {
	enter()
	contextCreate(contextID, parentContextID)
	leave()
}

//go:wasmexport proxy_on_vm_start
func abiOnVMStart(rootContextID, vmConfigurationSize uint32) uint32 {
	enter()
	arena.reserve(vmConfigurationSize) // read into guest-allocated memory (abiglue_memory.go)
	r := b2u(bool(proxyOnVMStart(rootContextID, int(vmConfigurationSize))))
	leave()
	return r
}

//go:wasmexport proxy_on_configure
func abiOnConfigure(rootContextID, pluginConfigurationSize uint32) uint32 {
	enter()
	arena.reserve(pluginConfigurationSize) // read into guest-allocated memory (abiglue_memory.go)
	r := b2u(bool(proxyOnConfigure(rootContextID, int(pluginConfigurationSize))))
	leave()
	return r
}

//go:wasmexport proxy_on_tick
func abiOnTick(rootContextID uint32) {
	enter()
	proxyOnTick(rootContextID)
	leave()
}

//go:wasmexport proxy_on_queue_ready
func abiOnQueueReady(rootContextID, queueID uint32) {
	enter()
	proxyOnQueueReady(rootContextID, queueID)
	leave()
}

//go:wasmexport proxy_on_request_headers
func abiOnRequestHeaders(contextID, numHeaders, endOfStream uint32) uint32 {
	enter()
	mapEntries[MapTypeHttpRequestHeaders] = numHeaders // bounds its reads (reserveForMap)
	r := uint32(httpContextOf(contextID, "proxy_on_request_headers").OnHttpRequestHeaders(int(numHeaders), endOfStream != 0))
	mapEntries[MapTypeHttpRequestHeaders] = 0
	leave()
	return r
}

//go:wasmexport proxy_on_request_body
func abiOnRequestBody(contextID, bodySize, endOfStream uint32) uint32 {
	enter()
	arena.reserve(bodySize) // the body is read into guest-allocated memory (abiglue_memory.go)
	r := uint32(httpContextOf(contextID, "proxy_on_request_body").OnHttpRequestBody(int(bodySize), endOfStream != 0))
	leave()
	return r
}

//go:wasmexport proxy_on_request_trailers
func abiOnRequestTrailers(contextID, numTrailers uint32) uint32 {
	enter()
	mapEntries[MapTypeHttpRequestTrailers] = numTrailers
	r := uint32(httpContextOf(contextID, "proxy_on_request_trailers").OnHttpRequestTrailers(int(numTrailers)))
	mapEntries[MapTypeHttpRequestTrailers] = 0
	leave()
	return r
}

//go:wasmexport proxy_on_response_headers
func abiOnResponseHeaders(contextID, numHeaders, endOfStream uint32) uint32 {
	enter()
	mapEntries[MapTypeHttpResponseHeaders] = numHeaders
	r := uint32(httpContextOf(contextID, "proxy_on_response_headers").OnHttpResponseHeaders(int(numHeaders), endOfStream != 0))
	mapEntries[MapTypeHttpResponseHeaders] = 0
	leave()
	return r
}

//go:wasmexport proxy_on_response_body
func abiOnResponseBody(contextID, bodySize, endOfStream uint32) uint32 {
	enter()
	arena.reserve(bodySize) // the body is read into guest-allocated memory (abiglue_memory.go)
	r := uint32(httpContextOf(contextID, "proxy_on_response_body").OnHttpResponseBody(int(bodySize), endOfStream != 0))
	leave()
	return r
}

//go:wasmexport proxy_on_response_trailers
func abiOnResponseTrailers(contextID, numTrailers uint32) uint32 {
	enter()
	mapEntries[MapTypeHttpResponseTrailers] = numTrailers
	r := uint32(httpContextOf(contextID, "proxy_on_response_trailers").OnHttpResponseTrailers(int(numTrailers)))
	mapEntries[MapTypeHttpResponseTrailers] = 0
	leave()
	return r
}

//go:wasmexport proxy_on_http_call_response
func abiOnHttpCallResponse(rootContextID, calloutID, numHeaders, bodySize, numTrailers uint32) {
	enter()
	proxyOnHttpCallResponse(rootContextID, calloutID, int(numHeaders), int(bodySize), int(numTrailers))
	leave()
}

//go:wasmexport proxy_on_new_connection
func abiOnNewConnection(contextID uint32) uint32 {
	enter()
	r := uint32(proxyOnNewConnection(contextID))
	leave()
	return r
}

//go:wasmexport proxy_on_downstream_data
func abiOnDownstreamData(contextID, dataSize, endOfStream uint32) uint32 {
	enter()
	r := uint32(proxyOnDownstreamData(contextID, int(dataSize), endOfStream != 0))
	leave()
	return r
}

//go:wasmexport proxy_on_downstream_connection_close
func abiOnDownstreamConnectionClose(contextID, peerType uint32) {
	enter()
	proxyOnDownstreamConnectionClose(contextID, types.PeerType(peerType))
	leave()
}

//go:wasmexport proxy_on_upstream_data
func abiOnUpstreamData(contextID, dataSize, endOfStream uint32) uint32 {
	enter()
	r := uint32(proxyOnUpstreamData(contextID, int(dataSize), endOfStream != 0))
	leave()
	return r
}

//go:wasmexport proxy_on_upstream_connection_close
func abiOnUpstreamConnectionClose(contextID, peerType uint32) {
	enter()
	proxyOnUpstreamConnectionClose(contextID, types.PeerType(peerType))
	leave()
}

//go:wasmexport proxy_on_log
func abiOnLog(contextID uint32) {
	enter()
	contextLog(contextID)
	leave()
}

//go:wasmexport proxy_on_done
func abiOnDone(contextID uint32) uint32 {
	enter()
	r := b2u(contextDone(contextID))
	leave()
	return r
}

//go:wasmexport proxy_on_delete
func abiOnDelete(contextID uint32) {
	enter()
	contextDelete(contextID)
	leave()
}
