//go:build wasip1 && abiglue

package internal

// The SDK's functions Proxy* (the ones package proxywasm calls), implemented
// directly on the host functions imported from "env". In a non-TinyGo build
// the SDK defines them in abi_hostcalls_mock.go as calls through the
// interface value currentHost; the plugin build excludes that file (see
// internal/abiglue/builder), so these take its place. Without the interface
// call the compiler sees that the SDK's own out-parameters (the data
// pointer, size and cas of GetSharedData, getMapValue, getBuffer, ...) do not
// escape, and keeps them on the stack.
//
// The host writes its out-parameters into the package-level variables
// below, never into the caller's stack frame: the host's call back into
// proxy_on_memory_allocate runs on the same goroutine stack and may grow it,
// which moves every frame, while the host keeps the 32-bit address it was
// given. The variables are read right after the host call returns; the guest
// is single-threaded and proxy_on_memory_allocate makes no host call, so no
// other call can overwrite them in between.
var (
	outData, outSize, outCas, outID uint32
	outValue                        uint64
)

// u32 converts an SDK size (Go int, 64-bit on wasm) to the ABI's 32-bit size.
// Sizes handed to the host describe Go slices in a 32-bit address space, so
// they always fit.
func u32(n int) uint32 { return uint32(n) }

// returned finishes a host call that returns a buffer: on success it stores
// the data pointer and size the host wrote into the SDK's out-parameters.
func returned(st uint32, retData **byte, retSize *int) Status {
	if Status(st) != StatusOK {
		return Status(st)
	}
	data, ok := arena.take(outData, outSize)
	if !ok {
		return StatusInternalFailure
	}
	*retData = data
	*retSize = int(outSize)
	return StatusOK
}

// clearOut resets the buffer out-parameters, so that a host answering OK
// without writing them returns no data rather than the previous call's.
func clearOut() { outData, outSize = 0, 0 }

func ProxyLog(logLevel LogLevel, messageData *byte, messageSize int) Status {
	return Status(hostLog(uint32(logLevel), messageData, u32(messageSize)))
}

func ProxySetProperty(pathData *byte, pathSize int, valueData *byte, valueSize int) Status {
	return Status(hostSetProperty(pathData, u32(pathSize), valueData, u32(valueSize)))
}

func ProxyGetProperty(pathData *byte, pathSize int, returnValueData **byte, returnValueSize *int) Status {
	clearOut()
	return returned(hostGetProperty(pathData, u32(pathSize), &outData, &outSize), returnValueData, returnValueSize)
}

func ProxySendLocalResponse(statusCode uint32, statusCodeDetailData *byte, statusCodeDetailsSize int, bodyData *byte, bodySize int, headersData *byte, headersSize int, grpcStatus int32) Status {
	return Status(hostSendLocalResponse(statusCode, statusCodeDetailData, u32(statusCodeDetailsSize),
		bodyData, u32(bodySize), headersData, u32(headersSize), grpcStatus))
}

func ProxyGetSharedData(keyData *byte, keySize int, returnValueData **byte, returnValueSize *int, returnCas *uint32) Status {
	clearOut()
	outCas = 0
	st := returned(hostGetSharedData(keyData, u32(keySize), &outData, &outSize, &outCas), returnValueData, returnValueSize)
	if st == StatusOK {
		*returnCas = outCas
	}
	return st
}

func ProxySetSharedData(keyData *byte, keySize int, valueData *byte, valueSize int, cas uint32) Status {
	return Status(hostSetSharedData(keyData, u32(keySize), valueData, u32(valueSize), cas))
}

func ProxyRegisterSharedQueue(nameData *byte, nameSize int, returnID *uint32) Status {
	st := Status(hostRegisterSharedQueue(nameData, u32(nameSize), &outID))
	if st == StatusOK {
		*returnID = outID
	}
	return st
}

func ProxyResolveSharedQueue(vmIDData *byte, vmIDSize int, nameData *byte, nameSize int, returnID *uint32) Status {
	st := Status(hostResolveSharedQueue(vmIDData, u32(vmIDSize), nameData, u32(nameSize), &outID))
	if st == StatusOK {
		*returnID = outID
	}
	return st
}

func ProxyDequeueSharedQueue(queueID uint32, returnValueData **byte, returnValueSize *int) Status {
	clearOut()
	return returned(hostDequeueSharedQueue(queueID, &outData, &outSize), returnValueData, returnValueSize)
}

func ProxyEnqueueSharedQueue(queueID uint32, valueData *byte, valueSize int) Status {
	return Status(hostEnqueueSharedQueue(queueID, valueData, u32(valueSize)))
}

func ProxyGetHeaderMapValue(mapType MapType, keyData *byte, keySize int, returnValueData **byte, returnValueSize *int) Status {
	startMapRead(mapType)
	st := hostGetHeaderMapValue(uint32(mapType), keyData, u32(keySize), &outData, &outSize)
	if mapReadRefused(mapType) {
		st = hostGetHeaderMapValue(uint32(mapType), keyData, u32(keySize), &outData, &outSize)
	}
	return returned(st, returnValueData, returnValueSize)
}

func ProxyAddHeaderMapValue(mapType MapType, keyData *byte, keySize int, valueData *byte, valueSize int) Status {
	wroteMap(mapType)
	return Status(hostAddHeaderMapValue(uint32(mapType), keyData, u32(keySize), valueData, u32(valueSize)))
}

func ProxyReplaceHeaderMapValue(mapType MapType, keyData *byte, keySize int, valueData *byte, valueSize int) Status {
	wroteMap(mapType)
	return Status(hostReplaceHeaderMapValue(uint32(mapType), keyData, u32(keySize), valueData, u32(valueSize)))
}

func ProxyContinueStream(streamType StreamType) Status {
	return Status(hostContinueStream(uint32(streamType)))
}

func ProxyCloseStream(streamType StreamType) Status {
	return Status(hostCloseStream(uint32(streamType)))
}

func ProxyRemoveHeaderMapValue(mapType MapType, keyData *byte, keySize int) Status {
	wroteMap(mapType)
	return Status(hostRemoveHeaderMapValue(uint32(mapType), keyData, u32(keySize)))
}

func ProxyGetHeaderMapPairs(mapType MapType, returnValueData **byte, returnValueSize *int) Status {
	startMapRead(mapType)
	st := hostGetHeaderMapPairs(uint32(mapType), &outData, &outSize)
	if mapReadRefused(mapType) {
		st = hostGetHeaderMapPairs(uint32(mapType), &outData, &outSize)
	}
	return returned(st, returnValueData, returnValueSize)
}

func ProxySetHeaderMapPairs(mapType MapType, mapData *byte, mapSize int) Status {
	wroteMap(mapType)
	return Status(hostSetHeaderMapPairs(uint32(mapType), mapData, u32(mapSize)))
}

func ProxyGetBufferBytes(bufferType BufferType, start int, maxSize int, returnBufferData **byte, returnBufferSize *int) Status {
	clearOut()
	return returned(hostGetBufferBytes(uint32(bufferType), u32(start), u32(maxSize), &outData, &outSize), returnBufferData, returnBufferSize)
}

func ProxySetBufferBytes(bufferType BufferType, start int, maxSize int, bufferData *byte, bufferSize int) Status {
	return Status(hostSetBufferBytes(uint32(bufferType), u32(start), u32(maxSize), bufferData, u32(bufferSize)))
}

func ProxyHttpCall(upstreamData *byte, upstreamSize int, headerData *byte, headerSize int, bodyData *byte, bodySize int, trailersData *byte, trailersSize int, timeout uint32, calloutIDPtr *uint32) Status {
	st := Status(hostHttpCall(upstreamData, u32(upstreamSize), headerData, u32(headerSize),
		bodyData, u32(bodySize), trailersData, u32(trailersSize), timeout, &outID))
	if st == StatusOK {
		*calloutIDPtr = outID
		httpCallMade() // before the SDK registers the callout under the active context
	}
	return st
}

func ProxyCallForeignFunction(funcNamePtr *byte, funcNameSize int, paramPtr *byte, paramSize int, returnData **byte, returnSize *int) Status {
	clearOut()
	return returned(hostCallForeignFunction(funcNamePtr, u32(funcNameSize), paramPtr, u32(paramSize), &outData, &outSize), returnData, returnSize)
}

func ProxySetTickPeriodMilliseconds(period uint32) Status {
	return Status(hostSetTickPeriodMilliseconds(period))
}

func ProxySetEffectiveContext(contextID uint32) Status {
	return Status(hostSetEffectiveContext(contextID))
}

func ProxyDone() Status {
	return Status(hostDone())
}

func ProxyDefineMetric(metricType MetricType, metricNameData *byte, metricNameSize int, returnMetricIDPtr *uint32) Status {
	st := Status(hostDefineMetric(uint32(metricType), metricNameData, u32(metricNameSize), &outID))
	if st == StatusOK {
		*returnMetricIDPtr = outID
	}
	return st
}

func ProxyIncrementMetric(metricID uint32, offset int64) Status {
	return Status(hostIncrementMetric(metricID, offset))
}

func ProxyRecordMetric(metricID uint32, value uint64) Status {
	return Status(hostRecordMetric(metricID, value))
}

func ProxyGetMetric(metricID uint32, returnMetricValue *uint64) Status {
	st := Status(hostGetMetric(metricID, &outValue))
	if st == StatusOK {
		*returnMetricValue = outValue
	}
	return st
}
