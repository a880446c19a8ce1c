package wasmhost

import "strconv"

// Values of the proxy-wasm ABI 0.2.1 (proxy-wasm/spec, abi-versions/v0.2.1/README.md).

// Status is a proxy_status_t returned by every host function.
type Status uint32

// Status values.
const (
	StatusOK                   Status = 0
	StatusNotFound             Status = 1
	StatusBadArgument          Status = 2
	StatusSerializationFailure Status = 3
	StatusParseFailure         Status = 4
	StatusInvalidMemoryAccess  Status = 6
	StatusEmpty                Status = 7
	StatusCASMismatch          Status = 8
	StatusInternalFailure      Status = 10
	StatusUnimplemented        Status = 12
)

// Action is what an HTTP callback returns: continue the stream or pause it.
type Action uint32

// Action values.
const (
	ActionContinue Action = 0
	ActionPause    Action = 1
)

// String names the action.
func (a Action) String() string {
	switch a {
	case ActionContinue:
		return "continue"
	case ActionPause:
		return "pause"
	}
	return "action(" + strconv.FormatUint(uint64(a), 10) + ")"
}

// Header map types (proxy_map_type_t).
const (
	mapRequestHeaders   = 0
	mapRequestTrailers  = 1
	mapResponseHeaders  = 2
	mapResponseTrailers = 3
	mapMax              = 6 // GRPC and HTTP call maps exist but are never available here
)

// Buffer types (proxy_buffer_type_t).
const (
	bufferRequestBody    = 0
	bufferResponseBody   = 1
	bufferVMConfig       = 6
	bufferPluginConfig   = 7
	bufferForeignFuncArg = 8
	bufferMax            = 8
)

// Stream types (proxy_stream_type_t).
const (
	streamRequest  = 0
	streamResponse = 1
)

// LogLevel is a proxy_log_level_t.
type LogLevel uint32

// Log levels.
const (
	LogTrace    LogLevel = 0
	LogDebug    LogLevel = 1
	LogInfo     LogLevel = 2
	LogWarn     LogLevel = 3
	LogError    LogLevel = 4
	LogCritical LogLevel = 5
)

// Metric types (proxy_metric_type_t).
const (
	metricCounter   = 0
	metricGauge     = 1
	metricHistogram = 2
)

// Response flags, as Envoy's StreamInfo::CoreResponseFlag bits
// (envoy/stream_info/stream_info.h), read by the plugin as the int64
// property response.flags.
const (
	FlagNoHealthyUpstream        uint64 = 0x2 // UH
	FlagUpstreamRequestTimeout   uint64 = 0x4
	FlagLocalReset               uint64 = 0x8
	FlagUpstreamRemoteReset      uint64 = 0x10
	FlagUpstreamConnFailure      uint64 = 0x20
	FlagUpstreamConnTermination  uint64 = 0x40
	FlagNoRouteFound             uint64 = 0x100
	FlagDownstreamConnTerminated uint64 = 0x4000   // DC
	FlagStreamIdleTimeout        uint64 = 0x10000  // SI
	FlagDownstreamProtocolError  uint64 = 0x40000  // DPE
	FlagDurationTimeout          uint64 = 0x400000 // DT
	FlagUpstreamProtocolError    uint64 = 0x800000 // UPE
	FlagDownstreamRemoteReset    uint64 = 0x10000000
)

// WASI errno values used by the Envoy-like WASI surface.
const (
	errnoSuccess = 0
	errnoBadf    = 8
	errnoFault   = 21
	errnoInval   = 28
	errnoNoent   = 44
	errnoNosys   = 52
	errnoNotsup  = 58
)
