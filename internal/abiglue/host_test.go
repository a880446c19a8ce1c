package abiglue_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// oldEnvoyHost is a minimal proxy-wasm host for the probe plugin, on wazero.
// Its WASI is what Envoy 1.33–1.38 offers (ENVOY-FACTS.md): exactly 18
// functions, poll_oneoff answering ENOSYS (52), fd_prestat_get EBADF (8), and,
// with restrict set, a trap for any call outside the short lists allowed while
// the guest runs _initialize or proxy_on_memory_allocate. Its env functions
// are only those the probe imports. It is a test fixture, not the project's
// embedded host (internal/wasmhost).
type oldEnvoyHost struct {
	restrict bool     // trap restricted calls like proxy-wasm-cpp-host before PR #533
	environ  []string // WASI environment ("KEY=value"); Envoy passes none by default
	// gcInCall makes every buffer-returning call run a complete GC in the
	// guest (the probe's probe_gc export) after filling the result buffer and
	// before returning its address, as a GC started by a later allocation in
	// the same call would: the glue must keep the buffer alive meanwhile.
	gcInCall bool

	mod     api.Module
	phase   string // "", "_initialize" or "proxy_on_memory_allocate"
	started time.Time

	pollCalls     int
	allocCalls    int
	allocRefusals int // allocations the guest refused (0), failing the call
	traps         []string
	exitCode      int // -1 until proc_exit
	output        bytes.Buffer
	logs          []string

	pluginConfig []byte
	headers      [][2]string // request headers of the current stream
	shared       map[string]sharedValue
	lastCas      uint32
	callouts     uint32 // proxy_http_call calls so far: the last callout's ID
}

type sharedValue struct {
	data []byte
	cas  uint32
}

// Proxy-wasm status codes and WASI errno values the host returns.
const (
	statusOK                  = 0
	statusNotFound            = 1
	statusBadArgument         = 2
	statusInvalidMemoryAccess = 6
	statusCasMismatch         = 8

	errnoBADF  = 8
	errnoNOSYS = 52
)

// allowedDuring lists the calls Envoy 1.33–1.38 allows in its restricted
// phases; anything else traps with restricted_callback.
var allowedDuring = map[string]map[string]bool{
	"_initialize": set("proxy_log", "fd_write", "args_get", "args_sizes_get", "environ_get", "environ_sizes_get",
		"fd_prestat_get", "fd_prestat_dir_name", "clock_time_get", "random_get", "fd_fdstat_get", "fd_fdstat_set_flags"),
	"proxy_on_memory_allocate": set("proxy_log", "fd_write", "clock_time_get"),
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// trapError is the panic value of a host function that traps the guest.
type trapError struct{ msg string }

func (e trapError) Error() string { return e.msg }

func (h *oldEnvoyHost) trap(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	h.traps = append(h.traps, msg)
	panic(trapError{msg})
}

// enter is called first by every host function: it enforces the phase lists.
func (h *oldEnvoyHost) enter(name string) {
	if !h.restrict || h.phase == "" {
		return
	}
	if !allowedDuring[h.phase][name] {
		h.trap("restricted_callback: %s called during %s", name, h.phase)
	}
}

// instantiate loads the module with this host's env and WASI modules. It does
// not call _initialize.
func (h *oldEnvoyHost) instantiate(ctx context.Context, r wazero.Runtime, compiled wazero.CompiledModule) error {
	h.exitCode = -1
	h.started = time.Now()
	h.shared = make(map[string]sharedValue)
	if err := h.instantiateWASI(ctx, r); err != nil {
		return err
	}
	if err := h.instantiateEnv(ctx, r); err != nil {
		return err
	}
	mod, err := r.InstantiateModule(ctx, compiled, wazero.NewModuleConfig().WithStartFunctions().WithName("plugin"))
	if err != nil {
		return err
	}
	h.mod = mod
	return nil
}

// call invokes a guest export in the given phase ("" for none).
func (h *oldEnvoyHost) call(ctx context.Context, phase, name string, args ...uint64) ([]uint64, error) {
	fn := h.mod.ExportedFunction(name)
	if fn == nil {
		return nil, fmt.Errorf("module does not export %s", name)
	}
	saved := h.phase
	h.phase = phase
	defer func() { h.phase = saved }()
	res, err := fn.Call(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (guest output: %q)", name, err, h.tail())
	}
	return res, nil
}

// tail returns the end of the guest's stdout/stderr, for error messages.
func (h *oldEnvoyHost) tail() string {
	s := h.output.String()
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

type hostFunc struct {
	params, results []api.ValueType
	fn              func(ctx context.Context, m api.Module, s []uint64)
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

func i32s(n int) []api.ValueType {
	out := make([]api.ValueType, n)
	for i := range out {
		out[i] = i32
	}
	return out
}

func (h *oldEnvoyHost) define(ctx context.Context, r wazero.Runtime, module string, funcs map[string]hostFunc) error {
	b := r.NewHostModuleBuilder(module)
	for name, f := range funcs {
		name, f := name, f
		b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, s []uint64) {
			h.enter(name)
			// An i32 argument arrives in a 64-bit slot whose upper half is
			// not guaranteed to be zero.
			for i, p := range f.params {
				if p == i32 {
					s[i] = uint64(uint32(s[i]))
				}
			}
			f.fn(ctx, m, s)
		}), f.params, f.results).Export(name)
	}
	_, err := b.Instantiate(ctx)
	return err
}

func (h *oldEnvoyHost) instantiateWASI(ctx context.Context, r wazero.Runtime) error {
	nosys := func(_ context.Context, _ api.Module, s []uint64) { s[0] = errnoNOSYS }
	zero := func(_ context.Context, _ api.Module, s []uint64) { s[0] = 0 }
	envSize := 0
	for _, e := range h.environ {
		envSize += len(e) + 1
	}
	return h.define(ctx, r, "wasi_snapshot_preview1", map[string]hostFunc{
		"args_sizes_get": {i32s(2), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			h.write32(m, s[0], 0)
			h.write32(m, s[1], 0)
			s[0] = 0
		}},
		"args_get": {i32s(2), i32s(1), zero},
		"environ_sizes_get": {i32s(2), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			h.write32(m, s[0], uint32(len(h.environ)))
			h.write32(m, s[1], uint32(envSize))
			s[0] = 0
		}},
		"environ_get": {i32s(2), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			ptrs, buf := uint32(s[0]), uint32(s[1])
			for i, e := range h.environ {
				h.write32(m, uint64(ptrs)+uint64(4*i), buf)
				h.writeBytes(m, buf, append([]byte(e), 0))
				buf += uint32(len(e) + 1)
			}
			s[0] = 0
		}},
		"clock_time_get": {[]api.ValueType{i32, i64, i32}, i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			var ns uint64
			if s[0] == 0 { // realtime
				ns = uint64(time.Now().UnixNano())
			} else {
				ns = uint64(time.Since(h.started).Nanoseconds()) + 1
			}
			if !m.Memory().WriteUint64Le(uint32(s[2]), ns) {
				h.trap("clock_time_get: bad pointer")
			}
			s[0] = 0
		}},
		"fd_write": {i32s(4), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			iovs, n := uint32(s[1]), uint32(s[2])
			total := uint32(0)
			for i := uint32(0); i < n; i++ {
				ptr := h.read32(m, iovs+8*i)
				size := h.read32(m, iovs+8*i+4)
				h.output.Write(h.readBytes(m, ptr, size))
				total += size
			}
			h.write32(m, s[3], total)
			s[0] = 0
		}},
		"random_get": {i32s(2), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			buf := make([]byte, uint32(s[1]))
			if _, err := rand.Read(buf); err != nil {
				h.trap("random_get: %v", err)
			}
			h.writeBytes(m, uint32(s[0]), buf)
			s[0] = 0
		}},
		"poll_oneoff": {i32s(4), i32s(1), func(_ context.Context, _ api.Module, s []uint64) {
			h.pollCalls++
			s[0] = errnoNOSYS
		}},
		"proc_exit": {i32s(1), nil, func(_ context.Context, _ api.Module, s []uint64) {
			h.exitCode = int(uint32(s[0]))
			h.trap("proc_exit(%d)", h.exitCode)
		}},
		"sched_yield": {nil, i32s(1), zero},
		"fd_close":    {i32s(1), i32s(1), zero},
		"fd_fdstat_get": {i32s(2), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			if s[0] != 1 && s[0] != 2 {
				s[0] = errnoBADF
				return
			}
			stat := make([]byte, 24)
			stat[0] = 2 // character device
			h.writeBytes(m, uint32(s[1]), stat)
			s[0] = 0
		}},
		"fd_fdstat_set_flags": {i32s(2), i32s(1), nosys},
		"fd_prestat_get": {i32s(2), i32s(1), func(_ context.Context, _ api.Module, s []uint64) {
			s[0] = errnoBADF
		}},
		"fd_prestat_dir_name": {i32s(3), i32s(1), nosys},
		"fd_read":             {i32s(4), i32s(1), nosys},
		"fd_seek":             {[]api.ValueType{i32, i64, i32, i32}, i32s(1), nosys},
		"path_open":           {[]api.ValueType{i32, i32, i32, i32, i32, i64, i64, i32, i32}, i32s(1), nosys},
	})
}

func (h *oldEnvoyHost) instantiateEnv(ctx context.Context, r wazero.Runtime) error {
	return h.define(ctx, r, "env", map[string]hostFunc{
		"proxy_log": {i32s(3), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			h.logs = append(h.logs, string(h.readBytes(m, uint32(s[1]), uint32(s[2]))))
			s[0] = statusOK
		}},
		"proxy_get_buffer_bytes": {i32s(5), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			const vmConfiguration, pluginConfiguration = 6, 7
			var buf []byte
			switch s[0] {
			case pluginConfiguration:
				buf = h.pluginConfig
			case vmConfiguration:
			default:
				s[0] = statusBadArgument
				return
			}
			start, max := int(uint32(s[1])), int(uint32(s[2]))
			if start > len(buf) {
				s[0] = statusBadArgument
				return
			}
			buf = buf[start:]
			if max < len(buf) {
				buf = buf[:max]
			}
			s[0] = h.returnBytes(ctx, m, buf, s[3], s[4])
		}},
		"proxy_get_header_map_value": {i32s(5), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			if s[0] != 0 {
				s[0] = statusBadArgument
				return
			}
			key := strings.ToLower(string(h.readBytes(m, uint32(s[1]), uint32(s[2]))))
			for _, kv := range h.headers {
				if kv[0] == key {
					s[0] = h.returnBytes(ctx, m, []byte(kv[1]), s[3], s[4])
					return
				}
			}
			s[0] = statusNotFound
		}},
		"proxy_get_header_map_size": {i32s(2), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			// Envoy's HeaderMap::byteSize(): key and value lengths only.
			if s[0] != 0 {
				s[0] = statusBadArgument
				return
			}
			n := 0
			for _, kv := range h.headers {
				n += len(kv[0]) + len(kv[1])
			}
			h.write32(m, s[1], uint32(n))
			s[0] = statusOK
		}},
		"proxy_replace_header_map_value": {i32s(5), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			if s[0] != 0 {
				s[0] = statusBadArgument
				return
			}
			key := strings.ToLower(string(h.readBytes(m, uint32(s[1]), uint32(s[2]))))
			value := string(h.readBytes(m, uint32(s[3]), uint32(s[4])))
			h.setHeader(key, value)
			s[0] = statusOK
		}},
		"proxy_get_shared_data": {i32s(5), i32s(1), func(ctx context.Context, m api.Module, s []uint64) {
			key := string(h.readBytes(m, uint32(s[0]), uint32(s[1])))
			v, ok := h.shared[key]
			if !ok {
				s[0] = statusNotFound
				return
			}
			st := h.returnBytes(ctx, m, v.data, s[2], s[3])
			h.write32(m, s[4], v.cas)
			s[0] = st
		}},
		"proxy_set_shared_data": {i32s(5), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			key := string(h.readBytes(m, uint32(s[0]), uint32(s[1])))
			value := h.readBytes(m, uint32(s[2]), uint32(s[3]))
			cas := uint32(s[4])
			if cur, ok := h.shared[key]; ok && cas != 0 && cas != cur.cas {
				s[0] = statusCasMismatch
				return
			}
			h.lastCas++
			h.shared[key] = sharedValue{data: value, cas: h.lastCas}
			s[0] = statusOK
		}},
		"proxy_set_effective_context": {i32s(1), i32s(1), func(_ context.Context, _ api.Module, s []uint64) {
			s[0] = statusOK
		}},
		"proxy_http_call": {i32s(10), i32s(1), func(_ context.Context, m api.Module, s []uint64) {
			// Accepts every call; the test answers it with
			// proxy_on_http_call_response when it chooses.
			h.callouts++
			h.write32(m, s[9], h.callouts)
			s[0] = statusOK
		}},
	})
}

// returnBytes hands data to the guest the way proxy-wasm-cpp-host does: an
// empty value is (0, 0); otherwise the guest allocates the buffer through
// proxy_on_memory_allocate, the host fills it and writes its address and size.
func (h *oldEnvoyHost) returnBytes(ctx context.Context, m api.Module, data []byte, ptrPtr, sizePtr uint64) uint64 {
	if len(data) == 0 {
		h.write32(m, ptrPtr, 0)
		h.write32(m, sizePtr, 0)
		return statusOK
	}
	ptr := h.allocate(ctx, uint32(len(data)))
	if ptr == 0 {
		// The allocator's failure: the call fails, nothing is written
		// (WasmBase::copyToPointerSize).
		h.allocRefusals++
		return statusInvalidMemoryAccess
	}
	h.writeBytes(m, ptr, data)
	if h.gcInCall {
		if _, err := h.call(ctx, "proxy_on_memory_allocate", "probe_gc"); err != nil {
			panic(err)
		}
	}
	h.write32(m, ptrPtr, ptr)
	h.write32(m, sizePtr, uint32(len(data)))
	return statusOK
}

func (h *oldEnvoyHost) allocate(ctx context.Context, size uint32) uint32 {
	h.allocCalls++
	res, err := h.call(ctx, "proxy_on_memory_allocate", "proxy_on_memory_allocate", uint64(size))
	if err != nil {
		var trap trapError
		if errors.As(err, &trap) {
			panic(trap)
		}
		panic(err)
	}
	return uint32(res[0])
}

func (h *oldEnvoyHost) setHeader(key, value string) {
	for i := range h.headers {
		if h.headers[i][0] == key {
			h.headers[i][1] = value
			return
		}
	}
	h.headers = append(h.headers, [2]string{key, value})
}

func (h *oldEnvoyHost) header(key string) (string, bool) {
	for _, kv := range h.headers {
		if kv[0] == key {
			return kv[1], true
		}
	}
	return "", false
}

func (h *oldEnvoyHost) readBytes(m api.Module, ptr, size uint32) []byte {
	b, ok := m.Memory().Read(ptr, size)
	if !ok {
		h.trap("read of %d bytes at %#x outside guest memory", size, ptr)
	}
	return bytes.Clone(b)
}

func (h *oldEnvoyHost) writeBytes(m api.Module, ptr uint32, data []byte) {
	if !m.Memory().Write(ptr, data) {
		h.trap("write of %d bytes at %#x outside guest memory", len(data), ptr)
	}
}

func (h *oldEnvoyHost) read32(m api.Module, ptr uint32) uint32 {
	v, ok := m.Memory().ReadUint32Le(ptr)
	if !ok {
		h.trap("read at %#x outside guest memory", ptr)
	}
	return v
}

func (h *oldEnvoyHost) write32(m api.Module, ptr uint64, v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	h.writeBytes(m, uint32(ptr), b[:])
}

// lifecycle runs _initialize and the root context's start as Envoy does.
func (h *oldEnvoyHost) lifecycle(ctx context.Context, rootID uint64) error {
	if _, err := h.call(ctx, "_initialize", "_initialize"); err != nil {
		return err
	}
	if _, err := h.call(ctx, "", "proxy_on_context_create", rootID, 0); err != nil {
		return err
	}
	if res, err := h.call(ctx, "", "proxy_on_vm_start", rootID, 0); err != nil {
		return err
	} else if res[0] != 1 {
		return fmt.Errorf("proxy_on_vm_start returned %d", res[0])
	}
	if res, err := h.call(ctx, "", "proxy_on_configure", rootID, uint64(len(h.pluginConfig))); err != nil {
		return err
	} else if res[0] != 1 {
		return fmt.Errorf("proxy_on_configure returned %d", res[0])
	}
	return nil
}

// request runs one HTTP stream with the given request headers through the
// request-headers callback and the end-of-stream callbacks in Envoy's order
// (log, done, delete), and returns the action and the headers afterwards.
func (h *oldEnvoyHost) request(ctx context.Context, rootID, id uint64, headers [][2]string) (uint64, error) {
	h.headers = headers
	if _, err := h.call(ctx, "", "proxy_on_context_create", id, rootID); err != nil {
		return 0, err
	}
	res, err := h.call(ctx, "", "proxy_on_request_headers", id, uint64(len(headers)), 1)
	if err != nil {
		return 0, err
	}
	for _, cb := range []string{"proxy_on_log", "proxy_on_done", "proxy_on_delete"} {
		if _, err := h.call(ctx, "", cb, id); err != nil {
			return 0, err
		}
	}
	return res[0], nil
}
