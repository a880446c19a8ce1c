package wasmhost

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// The WASI surface of Envoy 1.33–1.38 (proxy-wasm-cpp-host at the commits
// those releases pin: include/proxy-wasm/exports.h, src/exports.cc,
// src/wasm.cc). Exactly these 18 functions exist; a module importing any
// other wasi_snapshot_preview1 function does not link. Options.FullWASI
// replaces them by wazero's complete implementation (Envoy ≥ 1.39).

const wasiModule = "wasi_snapshot_preview1"

var errno = []api.ValueType{i32}

// randomGetMax is PROXY_WASM_HOST_WASI_RANDOM_GET_MAX_SIZE_BYTES.
const randomGetMax = 64 << 10

var wasiFuncs = []*hostFunc{
	// Allowed during _initialize (WasmBase::startVm's restricted list) and,
	// for fd_write and clock_time_get, during proxy_on_memory_allocate.
	{name: "args_get", params: sig(2), results: errno, initOK: true, fn: wasiOK},
	{name: "args_sizes_get", params: sig(2), results: errno, initOK: true, fn: wasiZeroPair},
	{name: "environ_get", params: sig(2), results: errno, initOK: true, fn: wasiEnvironGet},
	{name: "environ_sizes_get", params: sig(2), results: errno, initOK: true, fn: wasiEnvironSizesGet},
	{name: "clock_time_get", params: []api.ValueType{i32, i64, i32}, results: errno, initOK: true, allocOK: true, fn: wasiClockTimeGet},
	{name: "random_get", params: sig(2), results: errno, initOK: true, fn: wasiRandomGet},
	{name: "fd_write", params: sig(4), results: errno, initOK: true, allocOK: true, fn: wasiFdWrite},
	{name: "fd_fdstat_get", params: sig(2), results: errno, initOK: true, fn: wasiFdFdstatGet},
	// PR #427 stubs: ENOSYS.
	{name: "fd_fdstat_set_flags", params: sig(2), results: errno, initOK: true, fn: wasiErrno(errnoNosys)},
	// No preopened directories: fd_prestat_get answers EBADF, which ends
	// Go's preopen scan.
	{name: "fd_prestat_get", params: sig(2), results: errno, initOK: true, fn: wasiErrno(errnoBadf)},
	{name: "fd_prestat_dir_name", params: sig(3), results: errno, initOK: true, fn: wasiErrno(errnoNosys)},

	// Not allowed during _initialize or allocation.
	{name: "fd_read", params: sig(4), results: errno, fn: wasiErrno(errnoNosys)},
	{name: "path_open", params: []api.ValueType{i32, i32, i32, i32, i32, i64, i64, i32, i32}, results: errno, fn: wasiErrno(errnoNoent)},
	{name: "fd_close", params: sig(1), results: errno, fn: wasiLogged("wasi_unstable fd_close")},
	{name: "fd_seek", params: []api.ValueType{i32, i64, i32, i32}, results: errno, fn: wasiLogged("wasi_unstable fd_seek")},
	// PR #427: poll_oneoff answers ENOSYS (52), sched_yield succeeds.
	{name: "poll_oneoff", params: sig(4), results: errno, fn: wasiErrno(errnoNosys)},
	{name: "sched_yield", params: nil, results: errno, fn: wasiOK},
	{name: "proc_exit", params: sig(1), results: nil, fn: wasiProcExit},
}

var envoyWASI = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, f := range wasiFuncs {
		m[f.name] = struct{}{}
	}
	return m
}()

func (h *Host) instantiateEnvoyWASI(ctx context.Context) error {
	return h.register(ctx, wasiModule, wasiFuncs)
}

func wasiOK(_ *VM, _ api.Memory, st []uint64) { st[0] = errnoSuccess }

func wasiErrno(e uint64) func(*VM, api.Memory, []uint64) {
	return func(_ *VM, _ api.Memory, st []uint64) { st[0] = e }
}

// wasiLogged: Envoy reports the call as an error and returns success.
func wasiLogged(msg string) func(*VM, api.Memory, []uint64) {
	return func(vm *VM, _ api.Memory, st []uint64) {
		vm.host.log.Error(msg, "vm", vm.index)
		st[0] = errnoSuccess
	}
}

// wasiZeroPair writes 0 to both out-parameters: no arguments.
func wasiZeroPair(_ *VM, mem api.Memory, st []uint64) {
	if !mem.WriteUint32Le(u32(st, 0), 0) || !mem.WriteUint32Le(u32(st, 1), 0) {
		st[0] = errnoFault
		return
	}
	st[0] = errnoSuccess
}

// wasiEnvironSizesGet answers the number of Options.Env entries and their
// size as NUL-terminated strings.
func wasiEnvironSizesGet(vm *VM, mem api.Memory, st []uint64) {
	size := 0
	for _, e := range vm.host.opts.Env {
		size += len(e) + 1
	}
	if !mem.WriteUint32Le(u32(st, 0), uint32(len(vm.host.opts.Env))) || !mem.WriteUint32Le(u32(st, 1), uint32(size)) {
		st[0] = errnoFault
		return
	}
	st[0] = errnoSuccess
}

// wasiEnvironGet writes the Options.Env entries: an array of pointers at
// the first address, the NUL-terminated strings at the second.
func wasiEnvironGet(vm *VM, mem api.Memory, st []uint64) {
	ptrs, buf := u32(st, 0), u32(st, 1)
	for i, e := range vm.host.opts.Env {
		if !mem.WriteUint32Le(ptrs+uint32(4*i), buf) || !mem.WriteString(buf, e) || !mem.WriteByte(buf+uint32(len(e)), 0) {
			st[0] = errnoFault
			return
		}
		buf += uint32(len(e)) + 1
	}
	st[0] = errnoSuccess
}

var monoStart = time.Now()

// clock_time_get: realtime (0) and monotonic (1); other clocks ENOTSUP.
func wasiClockTimeGet(vm *VM, mem api.Memory, st []uint64) {
	var t uint64
	switch u32(st, 0) {
	case 0:
		t = uint64(vm.host.wallClock().UnixNano())
	case 1:
		t = uint64(time.Since(monoStart).Nanoseconds()) + 1
	default:
		st[0] = errnoNotsup
		return
	}
	if !mem.WriteUint64Le(u32(st, 2), t) {
		st[0] = errnoFault
		return
	}
	st[0] = errnoSuccess
}

func wasiRandomGet(_ *VM, mem api.Memory, st []uint64) {
	n := u32(st, 1)
	if n > randomGetMax {
		st[0] = errnoInval
		return
	}
	if n == 0 {
		st[0] = errnoSuccess
		return
	}
	buf, ok := mem.Read(u32(st, 0), n)
	if !ok {
		st[0] = errnoFault
		return
	}
	_, _ = rand.Read(buf)
	st[0] = errnoSuccess
}

// fd_write sends stdout to the log at info and stderr at error, one message
// per call without its trailing newline (exports.cc writevImpl); other
// descriptors are EBADF.
func wasiFdWrite(vm *VM, mem api.Memory, st []uint64) {
	fd, iovs, n, nwritten := u32(st, 0), u32(st, 1), u32(st, 2), u32(st, 3)
	var level LogLevel
	switch fd {
	case 1:
		level = LogInfo
	case 2:
		level = LogError
	default:
		st[0] = errnoBadf
		return
	}
	var sb strings.Builder
	for i := uint32(0); i < n; i++ {
		ptr, ok1 := mem.ReadUint32Le(iovs + 8*i)
		size, ok2 := mem.ReadUint32Le(iovs + 8*i + 4)
		if !ok1 || !ok2 {
			st[0] = errnoFault
			return
		}
		if size == 0 {
			continue
		}
		b, ok := mem.Read(ptr, size)
		if !ok {
			st[0] = errnoFault
			return
		}
		sb.Write(b)
	}
	written := sb.Len()
	if written > 0 {
		vm.emit(level, strings.TrimSuffix(sb.String(), "\n"))
	}
	if !mem.WriteUint32Le(nwritten, uint32(written)) {
		st[0] = errnoFault
		return
	}
	st[0] = errnoSuccess
}

func wasiFdFdstatGet(_ *VM, mem api.Memory, st []uint64) {
	fd := u32(st, 0)
	if fd != 1 && fd != 2 {
		st[0] = errnoBadf
		return
	}
	var stat [24]byte
	stat[8] = 64 // fs_rights_base = __WASI_RIGHTS_FD_WRITE
	if !mem.Write(u32(st, 1), stat[:]) {
		st[0] = errnoFault
		return
	}
	st[0] = errnoSuccess
}

// ErrProcExit is the trap raised by proc_exit.
var ErrProcExit = errors.New("proc_exit")

// proc_exit: Envoy only logs an error and returns into the guest, whose
// runtime then runs past a call it declared not to return. This host stops
// the guest at once with a trap, which fails the callback like any trap.
func wasiProcExit(vm *VM, _ api.Memory, st []uint64) {
	vm.host.log.Error("wasi_unstable proc_exit", "vm", vm.index, "code", u32(st, 0))
	panic(fmt.Errorf("%w(%d)", ErrProcExit, u32(st, 0)))
}

// logWriter sends the guest's stdout/stderr to the host log under
// FullWASI.
type logWriter struct {
	vm *VM
	l  LogLevel
}

func (w *logWriter) level(l LogLevel) *logWriter { return &logWriter{vm: w.vm, l: l} }

func (w *logWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.vm.emit(w.l, strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

type cryptoRand struct{}

func (cryptoRand) Read(p []byte) (int, error) { return rand.Read(p) }

func parseLogLevel(s string) (LogLevel, error) {
	switch strings.ToLower(s) {
	case "trace":
		return LogTrace, nil
	case "debug":
		return LogDebug, nil
	case "", "info":
		return LogInfo, nil
	case "warn", "warning":
		return LogWarn, nil
	case "error":
		return LogError, nil
	case "critical":
		return LogCritical, nil
	}
	return 0, fmt.Errorf("wasmhost: unknown log level %q", s)
}
