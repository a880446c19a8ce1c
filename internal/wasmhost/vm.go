package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// phase is what the guest is doing, for Envoy's restricted-call lists.
type phase uint8

const (
	phaseNormal phase = iota
	phaseInit         // _initialize (and main)
	phaseAlloc        // proxy_on_memory_allocate
)

func (p phase) String() string {
	switch p {
	case phaseInit:
		return "_initialize"
	case phaseAlloc:
		return "proxy_on_memory_allocate"
	}
	return "callback"
}

// VM is one instance of the plugin module, like the VM of one Envoy worker
// thread. Its callbacks are serialized by a mutex.
type VM struct {
	host  *Host
	index int
	ctx   context.Context

	mu         sync.Mutex // serializes every guest call on this VM
	mod        api.Module
	gen        uint32 // incremented by every (re)instantiation
	fn         callbacks
	stack      [8]uint64
	allocStack [1]uint64
	phase      phase
	rootID     uint32
	nextID     uint32
	cur        *Stream // stream whose callback runs; nil: the root context
	streams    map[uint32]*Stream
	metricIDs  map[uint32]*metric
	nextMetric uint32
	config     []byte    // configuration buffer readable in the current root callback
	configType uint32    // its buffer type (bufferVMConfig or bufferPluginConfig); 0: none
	broken     error     // set when the VM could not be (re)started
	scratch    []byte    // reusable serialization buffer
	call       *hostFunc // the host function the guest is in; nil: none
	num        [8]byte   // reusable integer property buffer

	tickPeriod atomic.Int64 // nanoseconds; 0 = off
	tickReset  chan struct{}

	requests atomic.Int64
	traps    atomic.Int64
}

// callbacks are the guest's exports; nil when not exported (all callbacks
// are optional, ABI 0.2.1).
type callbacks struct {
	initialize, main, start                         api.Function
	malloc                                          api.Function
	contextCreate, vmStart, configure, tick         api.Function
	requestHeaders, requestBody, requestTrailers    api.Function
	responseHeaders, responseBody, responseTrailers api.Function
	log, done, delete                               api.Function
}

func newVM(h *Host, i int) *VM {
	vm := &VM{host: h, index: i, tickReset: make(chan struct{}, 1)}
	vm.ctx = context.WithValue(context.Background(), vmKey{}, vm)
	return vm
}

// Index is the VM's position in the host (0-based).
func (vm *VM) Index() int { return vm.index }

// Requests is the number of streams this VM handled.
func (vm *VM) Requests() int64 { return vm.requests.Load() }

// MemoryBytes is the size of the VM's linear memory.
func (vm *VM) MemoryBytes() uint32 {
	vm.mu.Lock()
	defer vm.mu.Unlock()
	if vm.mod == nil {
		return 0
	}
	return vm.mod.Memory().Size()
}

// start instantiates the module and runs the root lifecycle. vm.mu is held.
func (vm *VM) start() error {
	h := vm.host
	vm.gen++
	vm.streams = map[uint32]*Stream{}
	vm.metricIDs = map[uint32]*metric{}
	vm.nextMetric = 0
	vm.cur = nil
	vm.tickPeriod.Store(0)
	cfg := wazero.NewModuleConfig().
		WithName("vm" + strconv.Itoa(vm.index) + "." + strconv.Itoa(int(vm.gen))).
		WithStartFunctions()
	if h.opts.FullWASI {
		w := &logWriter{vm: vm}
		cfg = cfg.WithSysWalltime().WithSysNanotime().WithSysNanosleep().
			WithRandSource(cryptoRand{}).
			WithStdout(w.level(LogInfo)).WithStderr(w.level(LogError))
		for _, e := range h.opts.Env {
			k, v, _ := strings.Cut(e, "=")
			cfg = cfg.WithEnv(k, v)
		}
	}
	mod, err := h.rt.InstantiateModule(vm.ctx, h.compiled, cfg)
	if err != nil {
		return fmt.Errorf("instantiate: %w", err)
	}
	vm.mod = mod
	f := func(name string) api.Function { return mod.ExportedFunction(name) }
	vm.fn = callbacks{
		initialize: f("_initialize"), main: f("main"), start: f("_start"),
		malloc:        f("proxy_on_memory_allocate"),
		contextCreate: f("proxy_on_context_create"), vmStart: f("proxy_on_vm_start"),
		configure: f("proxy_on_configure"), tick: f("proxy_on_tick"),
		requestHeaders: f("proxy_on_request_headers"), requestBody: f("proxy_on_request_body"),
		requestTrailers: f("proxy_on_request_trailers"), responseHeaders: f("proxy_on_response_headers"),
		responseBody: f("proxy_on_response_body"), responseTrailers: f("proxy_on_response_trailers"),
		log: f("proxy_on_log"), done: f("proxy_on_done"), delete: f("proxy_on_delete"),
	}
	if vm.fn.malloc == nil {
		vm.fn.malloc = f("malloc") // deprecated fallback, ABI 0.2.1
	}

	// Envoy calls _initialize, then main(0, 0) if both are exported, or
	// _start when _initialize is missing (proxy-wasm-cpp-host
	// WasmBase::startVm). All of it runs under the restricted-call list.
	vm.phase = phaseInit
	vm.trace(0, "_initialize")
	switch {
	case vm.fn.initialize != nil:
		err = vm.fn.initialize.CallWithStack(vm.ctx, vm.stack[:1])
		if err == nil && vm.fn.main != nil {
			vm.stack[0], vm.stack[1] = 0, 0
			err = vm.fn.main.CallWithStack(vm.ctx, vm.stack[:2])
		}
	case vm.fn.start != nil:
		err = vm.fn.start.CallWithStack(vm.ctx, vm.stack[:1])
	}
	vm.phase = phaseNormal
	if err != nil {
		return fmt.Errorf("_initialize failed: %w", err)
	}

	// Root context: id 1 (the VM context is 0 and never announced), stream
	// contexts get the next ids, never reused (proxy-wasm-cpp-host
	// WasmBase::allocContextId).
	vm.rootID = 1
	vm.nextID = 2
	vm.trace(vm.rootID, "proxy_on_context_create")
	if err := vm.call2(vm.fn.contextCreate, uint64(vm.rootID), 0); err != nil {
		return fmt.Errorf("proxy_on_context_create(root): %w", err)
	}
	vm.config, vm.configType = h.opts.VMConfig, bufferVMConfig
	vm.trace(vm.rootID, "proxy_on_vm_start")
	ok, err := vm.callBool(vm.fn.vmStart, uint64(vm.rootID), uint64(len(h.opts.VMConfig)))
	vm.config, vm.configType = nil, 0
	if err != nil {
		return fmt.Errorf("proxy_on_vm_start: %w", err)
	}
	if !ok {
		return errors.New("proxy_on_vm_start returned false (Envoy: Failed to start base Wasm)")
	}
	vm.config, vm.configType = h.opts.PluginConfig, bufferPluginConfig
	vm.trace(vm.rootID, "proxy_on_configure")
	ok, err = vm.callBool(vm.fn.configure, uint64(vm.rootID), uint64(len(h.opts.PluginConfig)))
	vm.config, vm.configType = nil, 0
	if err != nil {
		return fmt.Errorf("proxy_on_configure: %w", err)
	}
	if !ok {
		return errors.New("proxy_on_configure returned false (Envoy: Wasm VM failed to start / plugin configuration rejected)")
	}
	vm.broken = nil
	return nil
}

// trace reports a callback to Options.Trace.
func (vm *VM) trace(id uint32, name string) {
	if t := vm.host.opts.Trace; t != nil {
		t(vm.index, id, name)
	}
}

// call2 calls fn(a, b) for its side effects. A missing export is a no-op.
func (vm *VM) call2(fn api.Function, a, b uint64) error {
	if fn == nil {
		return nil
	}
	vm.stack[0], vm.stack[1] = a, b
	return fn.CallWithStack(vm.ctx, vm.stack[:2])
}

// call1 calls fn(a) for its side effects.
func (vm *VM) call1(fn api.Function, a uint64) error {
	if fn == nil {
		return nil
	}
	vm.stack[0] = a
	return fn.CallWithStack(vm.ctx, vm.stack[:1])
}

// callBool calls fn(a, b) and reads an i32 boolean result; a missing export
// answers true.
func (vm *VM) callBool(fn api.Function, a, b uint64) (bool, error) {
	if fn == nil {
		return true, nil
	}
	vm.stack[0], vm.stack[1] = a, b
	if err := fn.CallWithStack(vm.ctx, vm.stack[:2]); err != nil {
		return false, err
	}
	return uint32(vm.stack[0]) != 0, nil
}

// callAction calls an HTTP callback fn(id, n, eos) and reads its action; a
// missing export answers Continue.
// callAction2 calls a two-argument callback that returns an action
// (proxy_on_*_trailers: context id, number of trailers).
func (vm *VM) callAction2(fn api.Function, id uint32, n int) (Action, error) {
	if fn == nil {
		return ActionContinue, nil
	}
	vm.stack[0], vm.stack[1] = uint64(id), uint64(uint32(n))
	if err := fn.CallWithStack(vm.ctx, vm.stack[:2]); err != nil {
		return ActionContinue, err
	}
	if Action(uint32(vm.stack[0])) == ActionPause {
		return ActionPause, nil
	}
	return ActionContinue, nil
}

func (vm *VM) callAction(fn api.Function, id uint32, n int, eos bool) (Action, error) {
	if fn == nil {
		return ActionContinue, nil
	}
	vm.stack[0], vm.stack[1], vm.stack[2] = uint64(id), uint64(uint32(n)), 0
	if eos {
		vm.stack[2] = 1
	}
	if err := fn.CallWithStack(vm.ctx, vm.stack[:3]); err != nil {
		return 0, err
	}
	if Action(uint32(vm.stack[0])) == ActionPause {
		return ActionPause, nil
	}
	// Envoy treats any value but Pause as Continue for HTTP callbacks.
	return ActionContinue, nil
}

// alloc asks the guest for size bytes through proxy_on_memory_allocate,
// under Envoy's restricted list for that phase. 0 means failure.
func (vm *VM) alloc(size uint32) (uint32, error) {
	if vm.fn.malloc == nil {
		return 0, errors.New("module exports neither proxy_on_memory_allocate nor malloc")
	}
	prev := vm.phase
	vm.phase = phaseAlloc
	vm.allocStack[0] = uint64(size)
	var pages uint32
	if vm.host.opts.CountAllocGrowth {
		pages = vm.mod.Memory().Size()
	}
	err := vm.fn.malloc.CallWithStack(vm.ctx, vm.allocStack[:])
	vm.phase = prev
	if vm.host.opts.CountAllocGrowth {
		if after := vm.mod.Memory().Size(); after > pages {
			g := AllocGrowth{VM: vm.index, Size: size, Body: vm.cur != nil && vm.cur.bodyActive >= 0, Bytes: after - pages}
			if vm.call != nil {
				g.Call = vm.call.name
			}
			vm.host.recordAllocGrowth(g)
		}
	}
	if err != nil {
		return 0, err
	}
	return uint32(vm.allocStack[0]), nil
}

// AllocGrowth is one growth of a VM's linear memory that happened inside
// proxy_on_memory_allocate (Options.CountAllocGrowth).
type AllocGrowth struct {
	VM    int
	Call  string // the host function that asked for the memory (proxy_get_header_map_pairs, ...)
	Size  uint32 // bytes the host asked the guest for
	Body  bool   // during a body callback (request or response)
	Bytes uint32 // by how much memory grew, in bytes
}

// TrapError reports a guest trap or panic during a callback.
type TrapError struct {
	VM       int
	Callback string
	Err      error
}

func (e *TrapError) Error() string {
	return fmt.Sprintf("wasmhost: VM %d trapped in %s: %v", e.VM, e.Callback, e.Err)
}

func (e *TrapError) Unwrap() error { return e.Err }

// ErrVMRestarted is returned for a stream whose VM was re-instantiated
// after a trap: its context no longer exists in the new instance.
var ErrVMRestarted = errors.New("wasmhost: the stream's VM was restarted after a trap")

// trapped handles a failed guest call: it counts the trap, logs it, and
// re-instantiates the VM (Envoy marks the VM failed; with failure_policy
// FAIL_RELOAD it creates a new one — envoy source/extensions/common/wasm).
// vm.mu is held.
func (vm *VM) trapped(callback string, err error) error {
	h := vm.host
	select {
	case <-h.closed:
		// The runtime closed under a running stream: not the guest's fault.
		vm.broken = ErrClosed
		return ErrClosed
	default:
	}
	vm.traps.Add(1)
	h.stats.traps.Add(1)
	te := &TrapError{VM: vm.index, Callback: callback, Err: err}
	h.log.Error("wasm VM trapped; restarting it", "vm", vm.index, "callback", callback, "err", err)
	vm.restart()
	return te
}

// ErrClosed is returned for streams started after Host.Close.
var ErrClosed = errors.New("wasmhost: host closed")

// restart closes the module and instantiates a fresh one. vm.mu is held.
func (vm *VM) restart() {
	h := vm.host
	select {
	case <-h.closed:
		vm.broken = ErrClosed
		return
	default:
	}
	if vm.mod != nil {
		_ = vm.mod.Close(context.Background())
		vm.mod = nil
	}
	h.stats.restarts.Add(1)
	if err := vm.start(); err != nil {
		vm.broken = err
		h.log.Error("wasm VM restart failed", "vm", vm.index, "err", err)
	}
	select {
	case vm.tickReset <- struct{}{}:
	default:
	}
}

// ensure restarts a broken VM before use. vm.mu is held.
func (vm *VM) ensure() error {
	select {
	case <-vm.host.closed:
		return ErrClosed
	default:
	}
	if vm.broken == nil && vm.mod != nil {
		return nil
	}
	vm.restart()
	return vm.broken
}

// setTick changes the tick period of this VM's root context.
func (vm *VM) setTick(d time.Duration) {
	vm.tickPeriod.Store(int64(d))
	select {
	case vm.tickReset <- struct{}{}:
	default:
	}
}

// tickLoop calls proxy_on_tick(root) every tick period, like Envoy's
// per-worker timer for the root context.
func (vm *VM) tickLoop() {
	defer vm.host.ticks.Done()
	var t *time.Timer
	var c <-chan time.Time
	arm := func() {
		if t != nil {
			t.Stop()
			c = nil
		}
		if d := time.Duration(vm.tickPeriod.Load()); d > 0 {
			t = time.NewTimer(d)
			c = t.C
		}
	}
	arm()
	for {
		select {
		case <-vm.host.closed:
			if t != nil {
				t.Stop()
			}
			return
		case <-vm.tickReset:
			arm()
		case <-c:
			vm.mu.Lock()
			if vm.broken == nil && vm.mod != nil && vm.fn.tick != nil {
				vm.cur = nil
				if err := vm.call1(vm.fn.tick, uint64(vm.rootID)); err != nil {
					_ = vm.trapped("proxy_on_tick", err)
				}
			}
			vm.mu.Unlock()
			arm()
		}
	}
}
