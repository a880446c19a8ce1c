package wasmhost

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// The proxy-wasm host functions (module "env"), ABI 0.2.1. Each comment says
// what Envoy does where the host follows it (envoy
// source/extensions/common/wasm/context.cc, proxy-wasm-cpp-host src/exports.cc).

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

func sig(n int) []api.ValueType {
	p := make([]api.ValueType, n)
	for i := range p {
		p[i] = i32
	}
	return p
}

var status = []api.ValueType{i32}

// envFuncs lists every env function, so that any plugin links as it would
// in Envoy.
var envFuncs = []*hostFunc{
	{name: "proxy_log", params: sig(3), results: status, initOK: true, allocOK: true, fn: proxyLog},
	{name: "proxy_get_log_level", params: sig(1), results: status, fn: proxyGetLogLevel},
	{name: "proxy_get_current_time_nanoseconds", params: sig(1), results: status, fn: proxyGetCurrentTime},
	{name: "proxy_set_tick_period_milliseconds", params: sig(1), results: status, fn: proxySetTickPeriod},
	{name: "proxy_get_configuration", params: sig(2), results: status, fn: proxyGetConfiguration},
	{name: "proxy_get_buffer_bytes", params: sig(5), results: status, fn: proxyGetBufferBytes},
	{name: "proxy_get_buffer_status", params: sig(3), results: status, fn: proxyGetBufferStatus},
	{name: "proxy_set_buffer_bytes", params: sig(5), results: status, fn: proxySetBufferBytes},
	{name: "proxy_get_header_map_pairs", params: sig(3), results: status, fn: proxyGetHeaderMapPairs},
	{name: "proxy_set_header_map_pairs", params: sig(3), results: status, fn: proxySetHeaderMapPairs},
	{name: "proxy_get_header_map_size", params: sig(2), results: status, fn: proxyGetHeaderMapSize},
	{name: "proxy_get_header_map_value", params: sig(5), results: status, fn: proxyGetHeaderMapValue},
	{name: "proxy_add_header_map_value", params: sig(5), results: status, fn: proxyAddHeaderMapValue},
	{name: "proxy_replace_header_map_value", params: sig(5), results: status, fn: proxyReplaceHeaderMapValue},
	{name: "proxy_remove_header_map_value", params: sig(3), results: status, fn: proxyRemoveHeaderMapValue},
	{name: "proxy_get_property", params: sig(4), results: status, fn: proxyGetProperty},
	{name: "proxy_set_property", params: sig(4), results: status, fn: proxySetProperty},
	{name: "proxy_send_local_response", params: sig(8), results: status, fn: proxySendLocalResponse},
	{name: "proxy_continue_stream", params: sig(1), results: status, fn: proxyContinueStream},
	{name: "proxy_close_stream", params: sig(1), results: status, fn: proxyCloseStream},
	{name: "proxy_continue_request", params: nil, results: status, fn: func(vm *VM, _ api.Memory, st []uint64) { st[0] = uint64(continueStream(vm, streamRequest)) }},
	{name: "proxy_continue_response", params: nil, results: status, fn: func(vm *VM, _ api.Memory, st []uint64) { st[0] = uint64(continueStream(vm, streamResponse)) }},
	{name: "proxy_clear_route_cache", params: nil, results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusOK) }},
	{name: "proxy_get_shared_data", params: sig(5), results: status, fn: proxyGetSharedData},
	{name: "proxy_set_shared_data", params: sig(5), results: status, fn: proxySetSharedData},
	{name: "proxy_register_shared_queue", params: sig(3), results: status, fn: unimplemented},
	{name: "proxy_resolve_shared_queue", params: sig(5), results: status, fn: unimplemented},
	{name: "proxy_dequeue_shared_queue", params: sig(3), results: status, fn: unimplemented},
	{name: "proxy_enqueue_shared_queue", params: sig(3), results: status, fn: unimplemented},
	{name: "proxy_define_metric", params: sig(4), results: status, fn: proxyDefineMetric},
	{name: "proxy_increment_metric", params: []api.ValueType{i32, i64}, results: status, fn: proxyIncrementMetric},
	{name: "proxy_record_metric", params: []api.ValueType{i32, i64}, results: status, fn: proxyRecordMetric},
	{name: "proxy_get_metric", params: sig(2), results: status, fn: proxyGetMetric},
	// No clusters exist here: Envoy answers BAD_ARGUMENT for an unknown
	// upstream in proxy_http_call and PARSE_FAILURE in the gRPC calls.
	{name: "proxy_http_call", params: sig(10), results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusBadArgument) }},
	{name: "proxy_grpc_call", params: sig(12), results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusParseFailure) }},
	{name: "proxy_grpc_stream", params: sig(9), results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusParseFailure) }},
	{name: "proxy_grpc_send", params: sig(4), results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusNotFound) }},
	{name: "proxy_grpc_cancel", params: sig(1), results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusNotFound) }},
	{name: "proxy_grpc_close", params: sig(1), results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusNotFound) }},
	{name: "proxy_get_status", params: sig(3), results: status, fn: proxyGetStatus},
	{name: "proxy_set_effective_context", params: sig(1), results: status, fn: proxySetEffectiveContext},
	{name: "proxy_done", params: nil, results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusNotFound) }},
	{name: "proxy_call_foreign_function", params: sig(6), results: status, fn: func(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusNotFound) }},
}

var envFuncNames = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, f := range envFuncs {
		m[f.name] = struct{}{}
	}
	return m
}()

func (h *Host) instantiateEnv(ctx context.Context) error {
	return h.register(ctx, "env", envFuncs)
}

func unimplemented(_ *VM, _ api.Memory, st []uint64) { ret(st, StatusUnimplemented) }

// --- logging, time, timers ---

func slogLevel(l LogLevel) slog.Level {
	switch l {
	case LogTrace:
		return slog.LevelDebug - 4
	case LogDebug:
		return slog.LevelDebug
	case LogInfo:
		return slog.LevelInfo
	case LogWarn:
		return slog.LevelWarn
	case LogError:
		return slog.LevelError
	}
	return slog.LevelError + 4
}

// emit logs a guest message at level l unless it is below the host's level.
func (vm *VM) emit(l LogLevel, msg string) {
	h := vm.host
	if l < LogLevel(h.level.Load()) {
		return
	}
	var ctxID uint32
	if vm.cur != nil {
		ctxID = vm.cur.id
	} else {
		ctxID = vm.rootID
	}
	h.log.Log(context.Background(), slogLevel(l), msg, "source", "wasm", "vm", vm.index, "context", ctxID)
}

// proxy_log: a level above critical is BAD_ARGUMENT (exports.cc log).
func proxyLog(vm *VM, mem api.Memory, st []uint64) {
	level := LogLevel(u32(st, 0))
	if level > LogCritical {
		ret(st, StatusBadArgument)
		return
	}
	msg, ok := mem.Read(u32(st, 1), u32(st, 2)) // a view of guest memory
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	if level >= LogLevel(vm.host.level.Load()) { // below it, Envoy drops the line uncopied
		vm.emit(level, string(msg))
	}
	ret(st, StatusOK)
}

func proxyGetLogLevel(vm *VM, mem api.Memory, st []uint64) {
	if !mem.WriteUint32Le(u32(st, 0), vm.host.level.Load()) {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, StatusOK)
}

func proxyGetCurrentTime(vm *VM, mem api.Memory, st []uint64) {
	if !mem.WriteUint64Le(u32(st, 0), uint64(vm.host.wallClock().UnixNano())) {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, StatusOK)
}

// proxy_set_tick_period_milliseconds sets the root context's timer on this
// VM; 0 disables it.
func proxySetTickPeriod(vm *VM, _ api.Memory, st []uint64) {
	vm.setTick(time.Duration(u32(st, 0)) * time.Millisecond)
	ret(st, StatusOK)
}

func proxyGetConfiguration(vm *VM, mem api.Memory, st []uint64) {
	ret(st, vm.copyOut(mem, vm.host.opts.PluginConfig, u32(st, 0), u32(st, 1)))
}

// --- buffers ---

// buffer returns the buffer of type t available now. Envoy answers
// NOT_FOUND for a buffer that does not exist in the current callback.
func (vm *VM) buffer(t uint32) (data []byte, writable bool, st Status) {
	if t > bufferMax {
		return nil, false, StatusBadArgument
	}
	switch t {
	case bufferVMConfig, bufferPluginConfig:
		// VM_CONFIGURATION is readable in proxy_on_vm_start,
		// PLUGIN_CONFIGURATION in proxy_on_configure (ABI 0.2.1).
		if vm.cur == nil && vm.configType == t {
			return vm.config, false, StatusOK
		}
	case bufferRequestBody, bufferResponseBody:
		if s := vm.cur; s != nil && s.bodyActive == int(t) {
			return s.body, true, StatusOK
		}
	}
	return nil, false, StatusNotFound
}

// proxy_get_buffer_bytes: start beyond the end reads nothing, a range past
// the end is truncated (exports.cc get_buffer_bytes).
func proxyGetBufferBytes(vm *VM, mem api.Memory, st []uint64) {
	data, _, s := vm.buffer(u32(st, 0))
	if s == StatusOK && vm.host.failBuffer(BufferGet) {
		s = StatusInternalFailure
	}
	if s != StatusOK {
		ret(st, s)
		return
	}
	start, length := uint64(u32(st, 1)), uint64(u32(st, 2))
	size := uint64(len(data))
	if start > size {
		length = 0
	} else if start+length > size {
		length = size - start
	}
	if length == 0 {
		ret(st, vm.copyOut(mem, nil, u32(st, 3), u32(st, 4)))
		return
	}
	ret(st, vm.copyOut(mem, data[start:start+length], u32(st, 3), u32(st, 4)))
}

func proxyGetBufferStatus(vm *VM, mem api.Memory, st []uint64) {
	data, _, s := vm.buffer(u32(st, 0))
	if s != StatusOK {
		ret(st, s)
		return
	}
	if !mem.WriteUint32Le(u32(st, 1), uint32(len(data))) || !mem.WriteUint32Le(u32(st, 2), 0) {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, StatusOK)
}

// BufferOp names a body-buffer host call for fault injection.
type BufferOp string

// Body-buffer operations.
const (
	BufferGet BufferOp = "get" // proxy_get_buffer_bytes
	BufferSet BufferOp = "set" // proxy_set_buffer_bytes
)

// SetBufferFault installs fn, consulted on every body-buffer call that would
// otherwise succeed: when it returns true the call fails with
// INTERNAL_FAILURE. nil removes it. fn runs on the VM's goroutine.
func (h *Host) SetBufferFault(fn func(op BufferOp) bool) {
	if fn == nil {
		h.bufferFault.Store(nil)
		return
	}
	h.bufferFault.Store(&fn)
}

func (h *Host) failBuffer(op BufferOp) bool {
	fn := h.bufferFault.Load()
	return fn != nil && (*fn)(op)
}

// SetBufferBytes applies Envoy's Buffer::copyFrom to buf (envoy
// source/extensions/common/wasm/context.cc): start 0 drains size bytes from
// the front and then prepends data (so (0, 0) prepends and (0, MaxInt32)
// replaces); start at or beyond the current length appends; anything in
// between is BAD_ARGUMENT.
func SetBufferBytes(buf []byte, start, size uint32, data []byte) ([]byte, Status) {
	switch {
	case start == 0:
		drain := int(min(uint64(size), uint64(len(buf))))
		rest := buf[drain:]
		out := make([]byte, 0, len(data)+len(rest))
		out = append(out, data...)
		return append(out, rest...), StatusOK
	case uint64(start) >= uint64(len(buf)):
		return append(buf[:len(buf):len(buf)], data...), StatusOK
	}
	return buf, StatusBadArgument
}

func proxySetBufferBytes(vm *VM, mem api.Memory, st []uint64) {
	data, writable, s := vm.buffer(u32(st, 0))
	if s == StatusOK && vm.host.failBuffer(BufferSet) {
		s = StatusInternalFailure
	}
	if s != StatusOK {
		ret(st, s)
		return
	}
	val, ok := mem.Read(u32(st, 3), u32(st, 4))
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	if !writable {
		ret(st, StatusBadArgument)
		return
	}
	out, s := SetBufferBytes(data, u32(st, 1), u32(st, 2), val)
	if s == StatusOK {
		vm.cur.body = out
	}
	ret(st, s)
}

// --- header maps ---

// headerMap returns the map of type t usable now, for reading or writing.
// Envoy (Context::getHeaderMapValue and friends) answers BAD_ARGUMENT when
// the map is not available in the current callback (for example request
// headers after proxy_on_request_headers returned Continue), NOT_FOUND for a
// map that never existed when read in the log phase, and refuses writes in
// the log phase, where the maps are the access log's read-only ones.
func (vm *VM) headerMap(t uint32, write bool) (*Headers, Status) {
	if t > mapMax {
		return nil, StatusBadArgument
	}
	s := vm.cur
	if s == nil {
		return nil, StatusBadArgument
	}
	m, open := s.headerMap(t)
	switch {
	case m == nil:
		return nil, StatusBadArgument
	case open:
		return m, StatusOK
	case s.logPhase && !write:
		if *m == nil {
			return nil, StatusNotFound
		}
		return m, StatusOK
	}
	return nil, StatusBadArgument
}

// proxy_get_header_map_pairs: an empty map comes back as (0, 0), like
// exports.cc get_header_map_pairs.
func proxyGetHeaderMapPairs(vm *VM, mem api.Memory, st []uint64) {
	m, s := vm.headerMap(u32(st, 0), false)
	if s != StatusOK {
		ret(st, s)
		return
	}
	if len(*m) == 0 {
		ret(st, vm.copyOut(mem, nil, u32(st, 1), u32(st, 2)))
		return
	}
	vm.scratch = m.AppendSerialized(vm.scratch[:0])
	s = vm.copyOut(mem, vm.scratch, u32(st, 1), u32(st, 2))
	if fn := vm.host.pairsFault.Load(); fn != nil && s == StatusOK {
		// A host violating the ABI (SetHeaderMapPairsFault).
		ptr, _ := mem.ReadUint32Le(u32(st, 1))
		size, _ := mem.ReadUint32Le(u32(st, 2))
		ptr, size = (*fn)(ptr, size, mem.Size())
		mem.WriteUint32Le(u32(st, 1), ptr)
		mem.WriteUint32Le(u32(st, 2), size)
	}
	ret(st, s)
}

// SetHeaderMapPairsFault makes the host violate the ABI in
// proxy_get_header_map_pairs: after writing a map it returns the address
// and size fn makes of the true ones (memSize is the guest's memory size in
// bytes), e.g. a range outside memory or a size that does not match the
// serialized content. nil removes it. For tests of the plugin's checks.
func (h *Host) SetHeaderMapPairsFault(fn func(ptr, size, memSize uint32) (uint32, uint32)) {
	if fn == nil {
		h.pairsFault.Store(nil)
		return
	}
	h.pairsFault.Store(&fn)
}

// proxy_set_header_map_pairs replaces the whole map; keys are lowercased
// as Envoy's LowerCaseString does.
func proxySetHeaderMapPairs(vm *VM, mem api.Memory, st []uint64) {
	m, s := vm.headerMap(u32(st, 0), true)
	if s != StatusOK {
		ret(st, s)
		return
	}
	data, ok := mem.Read(u32(st, 1), u32(st, 2))
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	pairs, err := ParseHeaders(data)
	if err != nil {
		ret(st, StatusBadArgument)
		return
	}
	for i := range pairs {
		pairs[i].Key = lowerASCII(pairs[i].Key)
	}
	*m = pairs
	ret(st, StatusOK)
}

// proxy_get_header_map_size answers the sum of key and value lengths, as
// Envoy's Context::getHeaderMapSize does (HeaderMap::byteSize()), not the
// serialized size proxy_get_header_map_pairs copies (4 + 10 bytes per entry
// more).
func proxyGetHeaderMapSize(vm *VM, mem api.Memory, st []uint64) {
	m, s := vm.headerMap(u32(st, 0), false)
	if s != StatusOK {
		ret(st, s)
		return
	}
	if !mem.WriteUint32Le(u32(st, 1), uint32(m.ByteSize())) {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, StatusOK)
}

// proxy_get_header_map_value: NOT_FOUND for a missing key, the first value
// of a repeated one (Envoy's Context::getHeaderMapValue answers entry[0] of
// map->get(key), with a TODO calling it "a potential security issue"); keys
// are matched lowercased.
func proxyGetHeaderMapValue(vm *VM, mem api.Memory, st []uint64) {
	m, s := vm.headerMap(u32(st, 0), false)
	if s != StatusOK {
		ret(st, s)
		return
	}
	key, ok := mem.Read(u32(st, 1), u32(st, 2))
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	for _, e := range *m {
		if equalFoldKey(e.Key, key) {
			ret(st, vm.copyOutString(mem, e.Value, u32(st, 3), u32(st, 4)))
			return
		}
	}
	ret(st, StatusNotFound)
}

// equalFoldKey reports whether the lowercase key k equals the guest's key
// once lowercased, without allocating.
func equalFoldKey(k string, guest []byte) bool {
	if len(k) != len(guest) {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := guest[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if k[i] != c {
			return false
		}
	}
	return true
}

func readKeyValue(mem api.Memory, st []uint64) (key, value string, ok bool) {
	k, ok1 := mem.Read(u32(st, 1), u32(st, 2))
	v, ok2 := mem.Read(u32(st, 3), u32(st, 4))
	if !ok1 || !ok2 {
		return "", "", false
	}
	return lowerASCII(string(k)), string(v), true
}

func proxyAddHeaderMapValue(vm *VM, mem api.Memory, st []uint64) {
	m, s := vm.headerMap(u32(st, 0), true)
	if s != StatusOK {
		ret(st, s)
		return
	}
	k, v, ok := readKeyValue(mem, st)
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	*m = append(*m, Header{k, v})
	ret(st, StatusOK)
}

func proxyReplaceHeaderMapValue(vm *VM, mem api.Memory, st []uint64) {
	m, s := vm.headerMap(u32(st, 0), true)
	if s != StatusOK {
		ret(st, s)
		return
	}
	k, v, ok := readKeyValue(mem, st)
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	// Envoy's Context::replaceHeaderMapValue (source/extensions/common/wasm/context.cc)
	// calls HeaderMapImpl::setCopy, which removes every entry of the key and
	// adds one at the end (Headers.Set): a repeated header leaves the filter
	// with one value.
	m.Set(k, v)
	ret(st, StatusOK)
}

// proxy_remove_header_map_value: OK also for an absent key.
func proxyRemoveHeaderMapValue(vm *VM, mem api.Memory, st []uint64) {
	m, s := vm.headerMap(u32(st, 0), true)
	if s != StatusOK {
		ret(st, s)
		return
	}
	key, ok := mem.Read(u32(st, 1), u32(st, 2))
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	out := (*m)[:0]
	for _, e := range *m {
		if !equalFoldKey(e.Key, key) {
			out = append(out, e)
		}
	}
	*m = out
	ret(st, StatusOK)
}

// --- stream control ---

// proxy_send_local_response records the reply; the host sends it once the
// callback returns and the request never goes upstream (Envoy:
// Context::sendLocalResponse defers it and stops iteration). The reply then
// runs through this plugin's response callbacks. A second local reply while
// those run would hang the stream in Envoy (envoyproxy/envoy#28826); this
// host refuses it with INTERNAL_FAILURE, logs a warning and counts it
// (Stats.RefusedReplies). After the response started, a local reply can
// only reset the stream, as in Envoy.
func proxySendLocalResponse(vm *VM, mem api.Memory, st []uint64) {
	s := vm.cur
	if s == nil {
		ret(st, StatusBadArgument)
		return
	}
	details, ok1 := mem.Read(u32(st, 1), u32(st, 2))
	body, ok2 := mem.Read(u32(st, 3), u32(st, 4))
	hdrs, ok3 := mem.Read(u32(st, 5), u32(st, 6))
	if !ok1 || !ok2 || !ok3 {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	pairs, err := ParseHeaders(hdrs)
	if err != nil {
		ret(st, StatusBadArgument)
		return
	}
	if s.local != nil {
		vm.host.stats.refusedReplies.Add(1)
		vm.host.log.Warn("second local reply refused (Envoy would hang this stream, envoyproxy/envoy#28826)",
			"vm", vm.index, "context", s.id, "status", u32(st, 0))
		ret(st, StatusInternalFailure)
		return
	}
	if s.respStarted {
		s.resetAsked = true
		ret(st, StatusOK)
		return
	}
	for i := range pairs {
		pairs[i].Key = lowerASCII(pairs[i].Key)
	}
	s.local = &LocalReply{
		Status:  int(u32(st, 0)),
		Details: sanitizeDetails(string(details)),
		Body:    append([]byte(nil), body...),
		Headers: pairs,
		GRPC:    int32(u32(st, 7)),
	}
	vm.host.stats.localReplies.Add(1)
	ret(st, StatusOK)
}

func continueStream(vm *VM, t uint32) Status {
	if t > 2 {
		return StatusBadArgument
	}
	s := vm.cur
	if s == nil {
		return StatusBadArgument
	}
	if s.resumed == nil {
		s.resumed = make(chan struct{}, 1)
	}
	select {
	case s.resumed <- struct{}{}:
	default:
	}
	return StatusOK
}

func proxyContinueStream(vm *VM, _ api.Memory, st []uint64) {
	ret(st, continueStream(vm, u32(st, 0)))
}

// proxy_close_stream resets the stream (Envoy: resetStream).
func proxyCloseStream(vm *VM, _ api.Memory, st []uint64) {
	if u32(st, 0) > 2 {
		ret(st, StatusBadArgument)
		return
	}
	if vm.cur == nil {
		ret(st, StatusBadArgument)
		return
	}
	vm.cur.resetAsked = true
	ret(st, StatusOK)
}

func proxyGetStatus(vm *VM, mem api.Memory, st []uint64) {
	if !mem.WriteUint32Le(u32(st, 0), 0) {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, vm.copyOut(mem, nil, u32(st, 1), u32(st, 2)))
}

// proxy_set_effective_context switches to a live context of this VM;
// BAD_ARGUMENT for an unknown id.
func proxySetEffectiveContext(vm *VM, _ api.Memory, st []uint64) {
	id := u32(st, 0)
	if id == vm.rootID {
		vm.cur = nil
		ret(st, StatusOK)
		return
	}
	s, ok := vm.streams[id]
	if !ok {
		ret(st, StatusBadArgument)
		return
	}
	vm.cur = s
	ret(st, StatusOK)
}

// --- shared data ---

func proxyGetSharedData(vm *VM, mem api.Memory, st []uint64) {
	key, ok := mem.Read(u32(st, 0), u32(st, 1))
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	val, cas, s := vm.host.shared.get(key, vm.scratch[:0])
	if s != StatusOK {
		ret(st, s)
		return
	}
	vm.scratch = val
	if s := vm.copyOut(mem, val, u32(st, 2), u32(st, 3)); s != StatusOK {
		ret(st, s)
		return
	}
	if !mem.WriteUint32Le(u32(st, 4), cas) {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, StatusOK)
}

func proxySetSharedData(vm *VM, mem api.Memory, st []uint64) {
	key, ok1 := mem.Read(u32(st, 0), u32(st, 1))
	val, ok2 := mem.Read(u32(st, 2), u32(st, 3))
	if !ok1 || !ok2 {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, vm.host.shared.set(key, val, u32(st, 4)))
}

// --- metrics ---

func proxyDefineMetric(vm *VM, mem api.Memory, st []uint64) {
	kind := u32(st, 0)
	if kind > metricHistogram {
		ret(st, StatusBadArgument)
		return
	}
	name, ok := mem.Read(u32(st, 1), u32(st, 2))
	if !ok {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	m := vm.host.metrics.define(kind, string(name))
	vm.nextMetric++
	id := vm.nextMetric<<2 | kind // Envoy encodes the type in the id's low bits
	vm.metricIDs[id] = m
	if !mem.WriteUint32Le(u32(st, 3), id) {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, StatusOK)
}

// proxy_increment_metric: a counter only goes up (offset ≤ 0 is
// BAD_ARGUMENT), a gauge moves either way, a histogram cannot be
// incremented (Envoy Context::incrementMetric).
func proxyIncrementMetric(vm *VM, _ api.Memory, st []uint64) {
	m, ok := vm.metricIDs[u32(st, 0)]
	if !ok {
		ret(st, StatusNotFound)
		return
	}
	off := int64(st[1])
	switch m.kind {
	case metricCounter:
		if off <= 0 {
			ret(st, StatusBadArgument)
			return
		}
		m.value.Add(off)
	case metricGauge:
		m.value.Add(off)
	default:
		ret(st, StatusBadArgument)
		return
	}
	ret(st, StatusOK)
}

// proxy_record_metric: a counter adds the value, a gauge is set, a
// histogram records a sample (Envoy Context::recordMetric).
func proxyRecordMetric(vm *VM, _ api.Memory, st []uint64) {
	m, ok := vm.metricIDs[u32(st, 0)]
	if !ok {
		ret(st, StatusNotFound)
		return
	}
	v := st[1]
	switch m.kind {
	case metricCounter:
		m.value.Add(int64(min(v, math.MaxInt64)))
	case metricGauge:
		m.value.Store(int64(min(v, math.MaxInt64)))
	default:
		m.value.Add(int64(min(v, math.MaxInt64)))
		m.count.Add(1)
	}
	ret(st, StatusOK)
}

// proxy_get_metric: histograms cannot be read (BAD_ARGUMENT).
func proxyGetMetric(vm *VM, mem api.Memory, st []uint64) {
	m, ok := vm.metricIDs[u32(st, 0)]
	if !ok {
		ret(st, StatusNotFound)
		return
	}
	if m.kind == metricHistogram {
		ret(st, StatusBadArgument)
		return
	}
	if !mem.WriteUint64Le(u32(st, 1), uint64(m.value.Load())) {
		ret(st, StatusInvalidMemoryAccess)
		return
	}
	ret(st, StatusOK)
}
