//go:build wasip1 && abiglue

// This file is compiled only inside the build's copy of the SDK
// (build/sdk/proxywasm/internal), never in this repository's own packages.
//
// Host functions of the proxy-wasm ABI 0.2.1, imported from module "env".
// Every pointer and size is a 32-bit value on the wire; Go's wasm port passes
// pointers as i32 and this file only uses uint32/int64/uint64 scalars so no
// 64-bit int ever reaches the host. Out-parameters are *uint32 (or *uint64
// for metric values): the host writes exactly that many bytes.

package internal

//go:wasmimport env proxy_log
func hostLog(level uint32, msg *byte, msgSize uint32) uint32

//go:wasmimport env proxy_set_property
func hostSetProperty(path *byte, pathSize uint32, value *byte, valueSize uint32) uint32

//go:wasmimport env proxy_get_property
func hostGetProperty(path *byte, pathSize uint32, retData *uint32, retSize *uint32) uint32

//go:wasmimport env proxy_send_local_response
func hostSendLocalResponse(statusCode uint32, details *byte, detailsSize uint32, body *byte, bodySize uint32, headers *byte, headersSize uint32, grpcStatus int32) uint32

//go:wasmimport env proxy_get_shared_data
func hostGetSharedData(key *byte, keySize uint32, retData *uint32, retSize *uint32, retCas *uint32) uint32

//go:wasmimport env proxy_set_shared_data
func hostSetSharedData(key *byte, keySize uint32, value *byte, valueSize uint32, cas uint32) uint32

//go:wasmimport env proxy_register_shared_queue
func hostRegisterSharedQueue(name *byte, nameSize uint32, retID *uint32) uint32

//go:wasmimport env proxy_resolve_shared_queue
func hostResolveSharedQueue(vmID *byte, vmIDSize uint32, name *byte, nameSize uint32, retID *uint32) uint32

//go:wasmimport env proxy_dequeue_shared_queue
func hostDequeueSharedQueue(queueID uint32, retData *uint32, retSize *uint32) uint32

//go:wasmimport env proxy_enqueue_shared_queue
func hostEnqueueSharedQueue(queueID uint32, value *byte, valueSize uint32) uint32

//go:wasmimport env proxy_get_header_map_value
func hostGetHeaderMapValue(mapType uint32, key *byte, keySize uint32, retData *uint32, retSize *uint32) uint32

//go:wasmimport env proxy_add_header_map_value
func hostAddHeaderMapValue(mapType uint32, key *byte, keySize uint32, value *byte, valueSize uint32) uint32

//go:wasmimport env proxy_replace_header_map_value
func hostReplaceHeaderMapValue(mapType uint32, key *byte, keySize uint32, value *byte, valueSize uint32) uint32

//go:wasmimport env proxy_remove_header_map_value
func hostRemoveHeaderMapValue(mapType uint32, key *byte, keySize uint32) uint32

//go:wasmimport env proxy_get_header_map_size
func hostGetHeaderMapSize(mapType uint32, retSize *uint32) uint32

//go:wasmimport env proxy_get_header_map_pairs
func hostGetHeaderMapPairs(mapType uint32, retData *uint32, retSize *uint32) uint32

//go:wasmimport env proxy_set_header_map_pairs
func hostSetHeaderMapPairs(mapType uint32, data *byte, dataSize uint32) uint32

//go:wasmimport env proxy_continue_stream
func hostContinueStream(streamType uint32) uint32

//go:wasmimport env proxy_close_stream
func hostCloseStream(streamType uint32) uint32

//go:wasmimport env proxy_get_buffer_bytes
func hostGetBufferBytes(bufferType uint32, start uint32, maxSize uint32, retData *uint32, retSize *uint32) uint32

//go:wasmimport env proxy_set_buffer_bytes
func hostSetBufferBytes(bufferType uint32, start uint32, size uint32, data *byte, dataSize uint32) uint32

//go:wasmimport env proxy_http_call
func hostHttpCall(upstream *byte, upstreamSize uint32, headers *byte, headersSize uint32, body *byte, bodySize uint32, trailers *byte, trailersSize uint32, timeoutMillis uint32, retCalloutID *uint32) uint32

//go:wasmimport env proxy_call_foreign_function
func hostCallForeignFunction(name *byte, nameSize uint32, args *byte, argsSize uint32, retData *uint32, retSize *uint32) uint32

//go:wasmimport env proxy_set_tick_period_milliseconds
func hostSetTickPeriodMilliseconds(period uint32) uint32

//go:wasmimport env proxy_set_effective_context
func hostSetEffectiveContext(contextID uint32) uint32

//go:wasmimport env proxy_done
func hostDone() uint32

//go:wasmimport env proxy_define_metric
func hostDefineMetric(metricType uint32, name *byte, nameSize uint32, retID *uint32) uint32

//go:wasmimport env proxy_increment_metric
func hostIncrementMetric(metricID uint32, offset int64) uint32

//go:wasmimport env proxy_record_metric
func hostRecordMetric(metricID uint32, value uint64) uint32

//go:wasmimport env proxy_get_metric
func hostGetMetric(metricID uint32, retValue *uint64) uint32
