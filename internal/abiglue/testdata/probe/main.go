// Command probe is a small proxy-wasm plugin written against the
// proxy-wasm-go-sdk v0.24.0 API. The abiglue tests build it with the
// standard-Go build (internal/abiglue/builder) and run it under a minimal
// wazero host that behaves like Envoy 1.33–1.38 (poll_oneoff answers ENOSYS and
// traps during _initialize and proxy_on_memory_allocate).
//
// Per request it reads x-probe-in and answers with x-probe-out = "seen:" + in;
// it then forces x-probe-gc garbage collections, re-reading headers between
// them (so the host allocates guest memory while the heap churns) and checks
// every value it reads; it reads x-probe-big x-probe-big-reads times and
// checks its content; it increments the shared-data counter "probe.count" with
// compare-and-swap. The outcome goes into the request header x-probe-result.
// With x-probe-panic present it panics instead (an unrecovered plugin bug);
// x-probe-sleep-ms makes it sleep first (a timer wait inside a callback).
package main

import (
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"time"
	"unsafe"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

const counterKey = "probe.count"

func init() {
	// A collection and, if PROBE_INIT_SLEEP_MS is set, a sleep during
	// _initialize: the sleep makes an unpatched runtime call poll_oneoff
	// here, which Envoy before 1.39 refuses in this phase.
	runtime.GC()
	if ms, err := strconv.Atoi(os.Getenv("PROBE_INIT_SLEEP_MS")); err == nil {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
	proxywasm.SetVMContext(&vmContext{})
}

func main() {}

// probeGC lets the test host run a complete collection (mark and sweep) in
// the middle of one of its calls, between handing out a buffer through
// proxy_on_memory_allocate and returning its address: exactly where a GC
// started by a second allocation would run.
//
//go:wasmexport probe_gc
func probeGC() { runtime.GC() }

type vmContext struct{ types.DefaultVMContext }

func (*vmContext) OnVMStart(int) types.OnVMStartStatus {
	proxywasm.LogInfo("probe: vm start")
	return true
}

func (*vmContext) NewPluginContext(uint32) types.PluginContext { return &pluginContext{} }

type pluginContext struct{ types.DefaultPluginContext }

func (*pluginContext) OnPluginStart(size int) types.OnPluginStartStatus {
	cfg, err := proxywasm.GetPluginConfiguration()
	if err != nil && size > 0 {
		proxywasm.LogErrorf("probe: reading configuration: %v", err)
		return false
	}
	proxywasm.LogInfof("probe: configured with %q", cfg)
	return true
}

func (*pluginContext) OnTick() { runtime.GC() }

func (*pluginContext) NewHttpContext(uint32) types.HttpContext { return &httpContext{} }

type httpContext struct{ types.DefaultHttpContext }

// sink keeps garbage reachable across a collection so each GC has work to do.
var sink [][]byte

func (*httpContext) OnHttpRequestHeaders(int, bool) types.Action {
	if _, err := proxywasm.GetHttpRequestHeader("x-probe-panic"); err == nil {
		panic("probe: requested panic")
	}
	in, err := proxywasm.GetHttpRequestHeader("x-probe-in")
	if err != nil {
		proxywasm.LogErrorf("probe: reading x-probe-in: %v", err)
		return types.ActionContinue
	}
	if err := proxywasm.ReplaceHttpRequestHeader("x-probe-out", "seen:"+in); err != nil {
		proxywasm.LogErrorf("probe: replacing x-probe-out: %v", err)
	}

	// Churn: a large allocation released again gives the background
	// scavenger memory to return, and it then sleeps on a timer - the first
	// timer initialises the runtime's netpoller, after which every GC polls.
	if mib := headerInt("x-probe-churn-mib"); mib > 0 {
		churn := make([]byte, mib<<20)
		for i := 0; i < len(churn); i += 4096 {
			churn[i] = 1
		}
		churn = nil
		runtime.GC()
	}

	if ms := headerInt("x-probe-sleep-ms"); ms > 0 {
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}

	mismatches := 0
	gcs := headerInt("x-probe-gc")
	for i := 0; i < gcs; i++ {
		sink = append(sink, make([]byte, 4096))
		if len(sink) > 64 {
			sink = sink[:0]
		}
		runtime.GC()
		again, err := proxywasm.GetHttpRequestHeader("x-probe-in")
		if err != nil || again != in {
			mismatches++
		}
	}

	// Only proxy_on_memory_allocate runs guest code while the host serves
	// GetHttpRequestHeader, so a GC cycle that completes across the call
	// ran inside proxy_on_memory_allocate.
	bigReads := headerInt("x-probe-big-reads")
	gcsInAlloc := uint64(0)
	var kept []string
	for i := 0; i < bigReads; i++ {
		before := gcCycles()
		big, err := proxywasm.GetHttpRequestHeader("x-probe-big")
		gcsInAlloc += gcCycles() - before
		if err != nil || !isPattern(big) {
			mismatches++
		}
		kept = append(kept, big)
	}
	// Values read in one callback stay valid until it returns: a later
	// read never reuses their memory.
	mismatches += overlaps(kept)
	for _, big := range kept {
		if !isPattern(big) {
			mismatches++
		}
	}

	count := bumpCounter()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	result := "gcs=" + strconv.Itoa(int(ms.NumGC)) +
		" mismatches=" + strconv.Itoa(mismatches) +
		" count=" + strconv.Itoa(count) +
		" gcs_in_alloc=" + strconv.FormatUint(gcsInAlloc, 10)
	if err := proxywasm.ReplaceHttpRequestHeader("x-probe-result", result); err != nil {
		proxywasm.LogErrorf("probe: replacing x-probe-result: %v", err)
	}
	proxywasm.LogInfof("probe: %s", result)
	return types.ActionContinue
}

func (*httpContext) OnHttpStreamDone() { proxywasm.LogInfo("probe: stream done") }

// overlaps counts the pairs of values that share memory.
func overlaps(vs []string) int {
	n := 0
	for i := range vs {
		for j := i + 1; j < len(vs); j++ {
			a, b := uintptr(unsafe.Pointer(unsafe.StringData(vs[i]))), uintptr(unsafe.Pointer(unsafe.StringData(vs[j])))
			if len(vs[i]) > 0 && len(vs[j]) > 0 && a < b+uintptr(len(vs[j])) && b < a+uintptr(len(vs[i])) {
				n++
			}
		}
	}
	return n
}

var cyclesSample = []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}

// gcCycles returns the number of completed GC cycles, without stopping the
// world (unlike runtime.ReadMemStats).
func gcCycles() uint64 {
	metrics.Read(cyclesSample)
	return cyclesSample[0].Value.Uint64()
}

// headerInt reads a request header as a non-negative integer (0 if absent).
func headerInt(name string) int {
	v, err := proxywasm.GetHttpRequestHeader(name)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// isPattern reports whether s is "abc...xyzabc..." from its first byte on, the
// content the test host puts into x-probe-big.
func isPattern(s string) bool {
	if len(s) == 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != 'a'+byte(i%26) {
			return false
		}
	}
	return true
}

// bumpCounter increments the shared-data counter with compare-and-swap and
// returns the new value (-1 if it could not).
func bumpCounter() int {
	for attempt := 0; attempt < 8; attempt++ {
		raw, cas, err := proxywasm.GetSharedData(counterKey)
		n := 0
		switch err {
		case nil:
			if n, err = strconv.Atoi(string(raw)); err != nil {
				return -1
			}
		case types.ErrorStatusNotFound:
		default:
			return -1
		}
		n++
		switch err := proxywasm.SetSharedData(counterKey, []byte(strconv.Itoa(n)), cas); err {
		case nil:
			return n
		case types.ErrorStatusCasMismatch:
			continue
		default:
			return -1
		}
	}
	return -1
}
