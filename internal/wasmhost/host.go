package wasmhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Options configure a Host.
type Options struct {
	// Wasm is the plugin module (a WASI reactor exporting _initialize).
	Wasm []byte
	// PluginConfig is handed to proxy_on_configure as the
	// PLUGIN_CONFIGURATION buffer (Envoy: config.configuration).
	PluginConfig []byte
	// VMConfig is handed to proxy_on_vm_start as the VM_CONFIGURATION
	// buffer (Envoy: vm_config.configuration). Usually empty.
	VMConfig []byte
	// VMs is the number of VM instances, like Envoy's worker threads
	// (default 1). Requests are assigned round-robin.
	VMs int
	// RootID, PluginName and VMID answer the plugin_root_id, plugin_name
	// and plugin_vm_id properties.
	RootID, PluginName, VMID string
	// FullWASI replaces the Envoy 1.33–1.38 WASI surface by wazero's
	// complete wasi_snapshot_preview1, like Envoy ≥ 1.39.
	FullWASI bool
	// Logger receives proxy_log, fd_write and the host's own messages
	// (default: discard).
	Logger *slog.Logger
	// LogLevel is "trace", "debug", "info", "warn", "error" or "critical":
	// what proxy_get_log_level reports, and messages below it are dropped,
	// as Envoy does (default "info", Envoy's default).
	LogLevel string
	// MemoryLimitPages caps each VM's linear memory in 64 KiB pages
	// (default 16384 = 1 GiB, V8's cap in Envoy).
	MemoryLimitPages uint32
	// Trace, when set, is called before every guest callback with the VM
	// index, the context id and the export's name (tests use it to check
	// Envoy's callback order). It runs under the VM's lock: it must not call
	// back into the Host.
	Trace func(vm int, contextID uint32, callback string)
	// Env is the guest's environment ("KEY=value" entries), like Envoy's
	// vm_config.environment_variables; tests use it to set GOGC or
	// GODEBUG inside the VM.
	Env []string
	// Listener, when set, is told of every call to the guest functions it
	// returns a listener for (wazero's experimental function listeners):
	// tests count the guest's heap allocations with it. Listened functions
	// run slower.
	Listener experimental.FunctionListenerFactory
	// Properties answers further proxy_get_property paths (path segments
	// joined by "."), e.g. "node.id". Values are returned as given.
	Properties map[string][]byte
	// CountAllocGrowth records every growth of linear memory that happens
	// inside proxy_on_memory_allocate, whichever host call asked for the
	// memory (AllocGrowths). Envoy's WAMR runtime up to 2.2 traps the plugin
	// with "out of bounds memory access" when that happens during a host
	// call (its interpreter keeps the old memory size in the outer frame;
	// fixed in WAMR 2.3.0, #3872): seen for proxy_get_buffer_bytes and for
	// proxy_get_header_map_pairs of maps ≥ ~47 KiB, so the plugin must grow
	// its memory in its own frame instead.
	CountAllocGrowth bool
	// CountHostCalls counts the guest's calls of every host function
	// (HostCalls).
	CountHostCalls bool
}

// Host runs one proxy-wasm plugin in several VMs that share one shared-data
// store and one metric store.
type Host struct {
	opts     Options
	log      *slog.Logger
	level    atomic.Uint32                    // a LogLevel: SetLogLevel changes it while VMs run
	clock    atomic.Pointer[func() time.Time] // SetClock's; nil: time.Now
	rt       wazero.Runtime
	compiled wazero.CompiledModule
	vms      []*VM
	next     atomic.Uint64

	shared      sharedData
	metrics     metricStore
	stats       hostStats
	bufferFault atomic.Pointer[func(op BufferOp) bool]
	pairsFault  atomic.Pointer[func(ptr, size, memSize uint32) (uint32, uint32)]

	recordMu     sync.Mutex
	allocGrowths []AllocGrowth
	hostCalls    map[string]int64 // by host function name (Options.CountHostCalls)

	closeOnce sync.Once
	closed    chan struct{}
	ticks     sync.WaitGroup
}

type hostStats struct {
	streams        atomic.Int64
	traps          atomic.Int64
	restarts       atomic.Int64
	localReplies   atomic.Int64
	refusedReplies atomic.Int64
}

func (h *Host) recordAllocGrowth(g AllocGrowth) {
	h.recordMu.Lock()
	h.allocGrowths = append(h.allocGrowths, g)
	h.recordMu.Unlock()
}

// AllocGrowths returns the growths of linear memory inside
// proxy_on_memory_allocate recorded so far (Options.CountAllocGrowth).
func (h *Host) AllocGrowths() []AllocGrowth {
	h.recordMu.Lock()
	defer h.recordMu.Unlock()
	return append([]AllocGrowth(nil), h.allocGrowths...)
}

// HostCalls returns how often the guest called each host function so far,
// by name ("proxy_get_header_map_size", ...), when Options.CountHostCalls
// is set; nil otherwise.
func (h *Host) HostCalls() map[string]int64 {
	h.recordMu.Lock()
	defer h.recordMu.Unlock()
	if h.hostCalls == nil {
		return nil
	}
	calls := make(map[string]int64, len(h.hostCalls))
	for name, n := range h.hostCalls {
		calls[name] = n
	}
	return calls
}

func (h *Host) countHostCall(name string) {
	h.recordMu.Lock()
	if h.hostCalls == nil {
		h.hostCalls = make(map[string]int64)
	}
	h.hostCalls[name]++
	h.recordMu.Unlock()
}

// New compiles the module, instantiates opts.VMs VMs and runs each one's
// start-up: _initialize, then proxy_on_context_create(root, 0),
// proxy_on_vm_start and proxy_on_configure (Envoy's order, proxy-wasm-cpp-host
// WasmBase::startVm and ContextBase::onStart/onConfigure).
func New(ctx context.Context, opts Options) (*Host, error) {
	if len(opts.Wasm) == 0 {
		return nil, errors.New("wasmhost: Options.Wasm is empty")
	}
	if opts.VMs <= 0 {
		opts.VMs = 1
	}
	if opts.MemoryLimitPages == 0 {
		opts.MemoryLimitPages = 16384
	}
	level, err := parseLogLevel(opts.LogLevel)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	h := &Host{opts: opts, log: logger, closed: make(chan struct{})}
	h.level.Store(uint32(level))
	h.shared.init()
	h.metrics.init()

	cfg := wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(compilationCache).
		WithMemoryLimitPages(opts.MemoryLimitPages).
		WithCloseOnContextDone(false)
	h.rt = wazero.NewRuntimeWithConfig(ctx, cfg)
	if err := h.instantiateEnv(ctx); err != nil {
		h.rt.Close(ctx)
		return nil, err
	}
	if opts.FullWASI {
		_, err = wasi_snapshot_preview1.Instantiate(ctx, h.rt)
	} else {
		err = h.instantiateEnvoyWASI(ctx)
	}
	if err != nil {
		h.rt.Close(ctx)
		return nil, fmt.Errorf("wasmhost: WASI: %w", err)
	}
	compileCtx := ctx
	if opts.Listener != nil {
		compileCtx = experimental.WithFunctionListenerFactory(ctx, opts.Listener)
	}
	h.compiled, err = h.rt.CompileModule(compileCtx, opts.Wasm)
	if err != nil {
		h.rt.Close(ctx)
		return nil, fmt.Errorf("wasmhost: compile: %w", err)
	}
	if err := h.checkModule(); err != nil {
		h.rt.Close(ctx)
		return nil, err
	}
	for i := 0; i < opts.VMs; i++ {
		vm := newVM(h, i)
		h.vms = append(h.vms, vm)
		vm.mu.Lock()
		err := vm.start()
		vm.mu.Unlock()
		if err != nil {
			h.Close(ctx)
			return nil, fmt.Errorf("wasmhost: VM %d: %w", i, err)
		}
		h.ticks.Add(1)
		go vm.tickLoop()
	}
	return h, nil
}

// checkModule refuses modules Envoy refuses: without a proxy-wasm ABI
// version marker ("Wasm missing ABI version", proxy-wasm-cpp-host
// WasmBase::initialize), or importing a WASI function Envoy does not
// provide (the module fails to link).
func (h *Host) checkModule() error {
	exports := h.compiled.ExportedFunctions()
	switch {
	case exports["proxy_abi_version_0_2_1"] != nil, exports["proxy_abi_version_0_2_0"] != nil,
		exports["proxy_abi_version_0_1_0"] != nil:
	default:
		return errors.New("wasmhost: module exports no proxy_abi_version_* marker (Envoy: Wasm missing ABI version)")
	}
	for _, f := range h.compiled.ImportedFunctions() {
		mod, name, _ := f.Import()
		switch mod {
		case "env":
			if _, ok := envFuncNames[name]; !ok {
				return fmt.Errorf("wasmhost: module imports env.%s, which the host does not provide", name)
			}
		case wasiModule:
			if !h.opts.FullWASI {
				if _, ok := envoyWASI[name]; !ok {
					return fmt.Errorf("wasmhost: module imports %s.%s, which Envoy 1.33–1.38 does not provide (use FullWASI for Envoy ≥ 1.39)", mod, name)
				}
			}
		default:
			return fmt.Errorf("wasmhost: module imports %s.%s from an unknown module", mod, name)
		}
	}
	return nil
}

// WASIImports lists the wasi_snapshot_preview1 functions the module imports.
func (h *Host) WASIImports() []string {
	var out []string
	for _, f := range h.compiled.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod == wasiModule {
			out = append(out, name)
		}
	}
	return out
}

// SetLogLevel changes the level below which guest log lines are dropped, and
// which proxy_get_log_level answers, while the VMs run: what Envoy's admin
// endpoint does (POST /logging?wasm=debug). level is as Options.LogLevel.
func (h *Host) SetLogLevel(level string) error {
	l, err := parseLogLevel(level)
	if err != nil {
		return err
	}
	h.level.Store(uint32(l))
	return nil
}

// SetClock makes now the wall clock the guests read (WASI's realtime
// clock_time_get and proxy_get_current_time_nanoseconds), while the VMs run: tests of time-driven behaviour step it
// instead of sleeping. nil restores time.Now. The monotonic clock is not
// affected.
func (h *Host) SetClock(now func() time.Time) {
	if now == nil {
		h.clock.Store(nil)
		return
	}
	h.clock.Store(&now)
}

// wallClock is the guests' wall clock (SetClock).
func (h *Host) wallClock() time.Time {
	if now := h.clock.Load(); now != nil {
		return (*now)()
	}
	return time.Now()
}

// Close stops the tick timers and releases every VM.
func (h *Host) Close(ctx context.Context) error {
	h.closeOnce.Do(func() { close(h.closed) })
	h.ticks.Wait()
	return h.rt.Close(ctx)
}

// VMs returns the number of VMs.
func (h *Host) VMs() int { return len(h.vms) }

// VM returns VM i.
func (h *Host) VM(i int) *VM { return h.vms[i] }

// pick returns the next VM round-robin.
func (h *Host) pick() *VM {
	n := h.next.Add(1) - 1
	return h.vms[n%uint64(len(h.vms))]
}

// Logger returns the host's logger.
func (h *Host) Logger() *slog.Logger { return h.log }

// Stats is a snapshot of the host's own counters.
type Stats struct {
	Streams        int64   // streams created
	Traps          int64   // guest traps and panics
	Restarts       int64   // VMs re-instantiated after a trap
	LocalReplies   int64   // proxy_send_local_response calls honoured
	RefusedReplies int64   // second local replies refused (see doc.go)
	VMRequests     []int64 // streams per VM
	VMTraps        []int64 // traps per VM
	VMMemoryBytes  []uint32
}

// Stats returns the host's counters.
func (h *Host) Stats() Stats {
	s := Stats{
		Streams:        h.stats.streams.Load(),
		Traps:          h.stats.traps.Load(),
		Restarts:       h.stats.restarts.Load(),
		LocalReplies:   h.stats.localReplies.Load(),
		RefusedReplies: h.stats.refusedReplies.Load(),
	}
	for _, vm := range h.vms {
		s.VMRequests = append(s.VMRequests, vm.requests.Load())
		s.VMTraps = append(s.VMTraps, vm.traps.Load())
		s.VMMemoryBytes = append(s.VMMemoryBytes, vm.MemoryBytes())
	}
	return s
}

// compilationCache keeps compiled modules for every Host of the process, so
// that tests and restarts do not compile the same module again.
var compilationCache = wazero.NewCompilationCache()

// UseCompilationCacheDir makes every Host created afterwards keep compiled
// modules in dir too, across processes (wazero's file cache): a process run
// under valgrind then loads the guard's machine code instead of compiling
// it (tools/internal/bench's instruction counts). Call it before the first
// New.
func UseCompilationCacheDir(dir string) error {
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		return fmt.Errorf("wasmhost: compilation cache in %s: %w", dir, err)
	}
	compilationCache = c
	return nil
}

type vmKey struct{}

// vmOf returns the VM whose callback is running; every guest call carries it
// in its context.
func vmOf(ctx context.Context) *VM {
	return ctx.Value(vmKey{}).(*VM)
}

// hostFunc is one host function: its signature, the phases it may run in
// and its body.
type hostFunc struct {
	name      string
	params    []api.ValueType
	results   []api.ValueType
	initOK    bool // may be called during _initialize
	allocOK   bool // may be called during proxy_on_memory_allocate
	fn        func(vm *VM, mem api.Memory, stack []uint64)
	qualified string
}

// wrap turns f into a stack-based wazero function that finds its VM and
// enforces Envoy's restricted phases: a call outside the allowed list while
// the guest runs _initialize or proxy_on_memory_allocate fails the VM like
// proxy-wasm-cpp-host's restricted_callback check (src/wasm.cc,
// WasmBase::startVm / allocMemory) — a trap here.
func wrap(f *hostFunc) api.GoModuleFunc {
	return func(ctx context.Context, mod api.Module, stack []uint64) {
		vm := vmOf(ctx)
		if vm.phase != phaseNormal {
			if (vm.phase == phaseInit && !f.initOK) || (vm.phase == phaseAlloc && !f.allocOK) {
				panic(&RestrictedCallError{Func: f.qualified, Phase: vm.phase.String()})
			}
		}
		if vm.host.opts.CountHostCalls {
			vm.host.countHostCall(f.name)
		}
		prev := vm.call
		vm.call = f
		f.fn(vm, mod.Memory(), stack)
		vm.call = prev
	}
}

// RestrictedCallError is the trap raised when the guest calls a host
// function Envoy refuses in the current phase.
type RestrictedCallError struct {
	Func  string
	Phase string
}

func (e *RestrictedCallError) Error() string {
	return "restricted_callback: " + e.Func + " called during " + e.Phase
}

func (h *Host) register(ctx context.Context, module string, funcs []*hostFunc) error {
	b := h.rt.NewHostModuleBuilder(module)
	for _, f := range funcs {
		f.qualified = module + "." + f.name
		b.NewFunctionBuilder().WithGoModuleFunction(wrap(f), f.params, f.results).Export(f.name)
	}
	_, err := b.Instantiate(ctx)
	return err
}
