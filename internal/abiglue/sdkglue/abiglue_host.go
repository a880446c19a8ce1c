//go:build wasip1 && abiglue

package internal

// wasmHost implements the SDK's ProxyWasmHost interface with the real host
// functions imported from "env". The SDK's non-TinyGo build routes every host
// call through currentHost; installing wasmHost there at package
// initialisation makes the SDK talk to Envoy (or any proxy-wasm host) without
// touching a line of the SDK.
type wasmHost struct{}

var _ ProxyWasmHost = wasmHost{}

func init() {
	currentHost = wasmHost{}
}

// u32 converts an SDK size (Go int, 64-bit on wasm) to the ABI's 32-bit size.
// Sizes handed to the host describe Go slices in a 32-bit address space, so
// they always fit.
func u32(n int) uint32 { return uint32(n) }

func (wasmHost) ProxyLog(logLevel LogLevel, messageData *byte, messageSize int) Status {
	return Status(hostLog(uint32(logLevel), messageData, u32(messageSize)))
}

func (wasmHost) ProxySetProperty(pathData *byte, pathSize int, valueData *byte, valueSize int) Status {
	return Status(hostSetProperty(pathData, u32(pathSize), valueData, u32(valueSize)))
}

func (wasmHost) ProxyGetProperty(pathData *byte, pathSize int, returnValueData **byte, returnValueSize *int) Status {
	var addr, size uint32
	st := hostGetProperty(pathData, u32(pathSize), &addr, &size)
	return returnedBuffer(st, addr, size, returnValueData, returnValueSize)
}

func (wasmHost) ProxySendLocalResponse(statusCode uint32, statusCodeDetailData *byte, statusCodeDetailsSize int, bodyData *byte, bodySize int, headersData *byte, headersSize int, grpcStatus int32) Status {
	return Status(hostSendLocalResponse(statusCode, statusCodeDetailData, u32(statusCodeDetailsSize),
		bodyData, u32(bodySize), headersData, u32(headersSize), grpcStatus))
}

func (wasmHost) ProxyGetSharedData(keyData *byte, keySize int, returnValueData **byte, returnValueSize *int, returnCas *uint32) Status {
	var addr, size, cas uint32
	st := hostGetSharedData(keyData, u32(keySize), &addr, &size, &cas)
	res := returnedBuffer(st, addr, size, returnValueData, returnValueSize)
	if res == StatusOK {
		*returnCas = cas
	}
	return res
}

func (wasmHost) ProxySetSharedData(keyData *byte, keySize int, valueData *byte, valueSize int, cas uint32) Status {
	return Status(hostSetSharedData(keyData, u32(keySize), valueData, u32(valueSize), cas))
}

func (wasmHost) ProxyRegisterSharedQueue(nameData *byte, nameSize int, returnID *uint32) Status {
	var id uint32
	st := Status(hostRegisterSharedQueue(nameData, u32(nameSize), &id))
	if st == StatusOK {
		*returnID = id
	}
	return st
}

func (wasmHost) ProxyResolveSharedQueue(vmIDData *byte, vmIDSize int, nameData *byte, nameSize int, returnID *uint32) Status {
	var id uint32
	st := Status(hostResolveSharedQueue(vmIDData, u32(vmIDSize), nameData, u32(nameSize), &id))
	if st == StatusOK {
		*returnID = id
	}
	return st
}

func (wasmHost) ProxyDequeueSharedQueue(queueID uint32, returnValueData **byte, returnValueSize *int) Status {
	var addr, size uint32
	st := hostDequeueSharedQueue(queueID, &addr, &size)
	return returnedBuffer(st, addr, size, returnValueData, returnValueSize)
}

func (wasmHost) ProxyEnqueueSharedQueue(queueID uint32, valueData *byte, valueSize int) Status {
	return Status(hostEnqueueSharedQueue(queueID, valueData, u32(valueSize)))
}

func (wasmHost) ProxyGetHeaderMapValue(mapType MapType, keyData *byte, keySize int, returnValueData **byte, returnValueSize *int) Status {
	var addr, size uint32
	st := hostGetHeaderMapValue(uint32(mapType), keyData, u32(keySize), &addr, &size)
	return returnedBuffer(st, addr, size, returnValueData, returnValueSize)
}

func (wasmHost) ProxyAddHeaderMapValue(mapType MapType, keyData *byte, keySize int, valueData *byte, valueSize int) Status {
	return Status(hostAddHeaderMapValue(uint32(mapType), keyData, u32(keySize), valueData, u32(valueSize)))
}

func (wasmHost) ProxyReplaceHeaderMapValue(mapType MapType, keyData *byte, keySize int, valueData *byte, valueSize int) Status {
	return Status(hostReplaceHeaderMapValue(uint32(mapType), keyData, u32(keySize), valueData, u32(valueSize)))
}

func (wasmHost) ProxyContinueStream(streamType StreamType) Status {
	return Status(hostContinueStream(uint32(streamType)))
}

func (wasmHost) ProxyCloseStream(streamType StreamType) Status {
	return Status(hostCloseStream(uint32(streamType)))
}

func (wasmHost) ProxyRemoveHeaderMapValue(mapType MapType, keyData *byte, keySize int) Status {
	return Status(hostRemoveHeaderMapValue(uint32(mapType), keyData, u32(keySize)))
}

func (wasmHost) ProxyGetHeaderMapPairs(mapType MapType, returnValueData **byte, returnValueSize *int) Status {
	var addr, size uint32
	st := hostGetHeaderMapPairs(uint32(mapType), &addr, &size)
	return returnedBuffer(st, addr, size, returnValueData, returnValueSize)
}

func (wasmHost) ProxySetHeaderMapPairs(mapType MapType, mapData *byte, mapSize int) Status {
	return Status(hostSetHeaderMapPairs(uint32(mapType), mapData, u32(mapSize)))
}

func (wasmHost) ProxyGetBufferBytes(bufferType BufferType, start int, maxSize int, returnBufferData **byte, returnBufferSize *int) Status {
	var addr, size uint32
	st := hostGetBufferBytes(uint32(bufferType), u32(start), u32(maxSize), &addr, &size)
	return returnedBuffer(st, addr, size, returnBufferData, returnBufferSize)
}

func (wasmHost) ProxySetBufferBytes(bufferType BufferType, start int, maxSize int, bufferData *byte, bufferSize int) Status {
	return Status(hostSetBufferBytes(uint32(bufferType), u32(start), u32(maxSize), bufferData, u32(bufferSize)))
}

func (wasmHost) ProxyHttpCall(upstreamData *byte, upstreamSize int, headerData *byte, headerSize int, bodyData *byte, bodySize int, trailersData *byte, trailersSize int, timeout uint32, calloutIDPtr *uint32) Status {
	var id uint32
	st := Status(hostHttpCall(upstreamData, u32(upstreamSize), headerData, u32(headerSize),
		bodyData, u32(bodySize), trailersData, u32(trailersSize), timeout, &id))
	if st == StatusOK {
		*calloutIDPtr = id
	}
	return st
}

func (wasmHost) ProxyCallForeignFunction(funcNamePtr *byte, funcNameSize int, paramPtr *byte, paramSize int, returnData **byte, returnSize *int) Status {
	var addr, size uint32
	st := hostCallForeignFunction(funcNamePtr, u32(funcNameSize), paramPtr, u32(paramSize), &addr, &size)
	return returnedBuffer(st, addr, size, returnData, returnSize)
}

func (wasmHost) ProxySetTickPeriodMilliseconds(period uint32) Status {
	return Status(hostSetTickPeriodMilliseconds(period))
}

func (wasmHost) ProxySetEffectiveContext(contextID uint32) Status {
	return Status(hostSetEffectiveContext(contextID))
}

func (wasmHost) ProxyDone() Status {
	return Status(hostDone())
}

func (wasmHost) ProxyDefineMetric(metricType MetricType, metricNameData *byte, metricNameSize int, returnMetricIDPtr *uint32) Status {
	var id uint32
	st := Status(hostDefineMetric(uint32(metricType), metricNameData, u32(metricNameSize), &id))
	if st == StatusOK {
		*returnMetricIDPtr = id
	}
	return st
}

func (wasmHost) ProxyIncrementMetric(metricID uint32, offset int64) Status {
	return Status(hostIncrementMetric(metricID, offset))
}

func (wasmHost) ProxyRecordMetric(metricID uint32, value uint64) Status {
	return Status(hostRecordMetric(metricID, value))
}

func (wasmHost) ProxyGetMetric(metricID uint32, returnMetricValue *uint64) Status {
	var v uint64
	st := Status(hostGetMetric(metricID, &v))
	if st == StatusOK {
		*returnMetricValue = v
	}
	return st
}
