package abiglue_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/wasmcheck"
)

// The probe is built once per test binary run, into a temporary directory,
// with and without the runtime overlay.
var (
	buildDir string
	probes   sync.Map // {name, patched} -> *probeBuild
)

type probeBuild struct {
	once sync.Once
	res  *builder.Result
	err  error
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "abiglue-probe-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildProbe builds testdata/probe with the project's builder (the code
// behind internal/tools/wasmbuild), patched or not, at most once per run.
func buildProbe(t *testing.T, patched bool) *builder.Result {
	t.Helper()
	return buildPlugin(t, "probe", patched)
}

// buildPlugin builds testdata/<name> with the project's builder, patched or
// not, at most once per run.
func buildPlugin(t *testing.T, name string, patched bool) *builder.Result {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a wasm module; skipped in -short mode")
	}
	type key struct {
		name    string
		patched bool
	}
	v, _ := probes.LoadOrStore(key{name, patched}, &probeBuild{})
	pb := v.(*probeBuild)
	pb.once.Do(func() {
		out := name + ".wasm"
		if !patched {
			out = name + "-unpatched.wasm"
		}
		var log strings.Builder
		pb.res, pb.err = builder.Build(context.Background(), builder.Options{
			Package:        "./testdata/" + name,
			Output:         filepath.Join(buildDir, out),
			WorkDir:        filepath.Join(buildDir, "work"),
			NoRuntimePatch: !patched,
			Log:            &log,
		})
		if pb.err != nil {
			pb.err = fmt.Errorf("%w\n%s", pb.err, log.String())
		}
	})
	if pb.err != nil {
		t.Fatalf("building testdata/%s (patched=%v): %v", name, patched, pb.err)
	}
	return pb.res
}

// wazeroCache shares compiled code between the tests of one run.
var wazeroCache = wazero.NewCompilationCache()

func load(t *testing.T, res *builder.Result, h *oldEnvoyHost) context.Context {
	t.Helper()
	ctx := context.Background()
	r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(wazeroCache))
	t.Cleanup(func() { r.Close(ctx) })
	bin, err := os.ReadFile(res.Output)
	if err != nil {
		t.Fatal(err)
	}
	compiled, err := r.CompileModule(ctx, bin)
	if err != nil {
		t.Fatalf("compiling %s: %v", res.Output, err)
	}
	if err := h.instantiate(ctx, r, compiled); err != nil {
		t.Fatalf("instantiating %s under the Envoy 1.33–1.38 host: %v", res.Output, err)
	}
	return ctx
}

// bigHeader is the x-probe-big value the probe checks: a-z repeated.
func bigHeader(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return string(b)
}

// probeHeaders are the request headers that drive the probe: a value to echo,
// the number of forced GCs, MiB to allocate and release first (0: none) and
// reads of a 256 KiB header (each allocation that large may start a GC inside
// proxy_on_memory_allocate).
func probeHeaders(in string, gcs, churnMiB, bigReads int) [][2]string {
	h := [][2]string{
		{":path", "/probe"},
		{"x-probe-in", in},
		{"x-probe-gc", strconv.Itoa(gcs)},
		{"x-probe-churn-mib", strconv.Itoa(churnMiB)},
	}
	if bigReads > 0 {
		h = append(h, [2]string{"x-probe-big", bigHeader(256 << 10)}, [2]string{"x-probe-big-reads", strconv.Itoa(bigReads)})
	}
	return h
}

type probeResult struct{ gcs, mismatches, count, gcsInAlloc int }

func parseResult(t *testing.T, s string) probeResult {
	t.Helper()
	var r probeResult
	if _, err := fmt.Sscanf(s, "gcs=%d mismatches=%d count=%d gcs_in_alloc=%d", &r.gcs, &r.mismatches, &r.count, &r.gcsInAlloc); err != nil {
		t.Fatalf("x-probe-result %q: %v", s, err)
	}
	return r
}

// TestProbeSurvivesOldEnvoy is the proof the standard-Go build needs (docs/deploy-envoy.md: the poll_oneoff patch for Envoy 1.33-1.38): the probe,
// built by the project's builder, runs under a host that behaves like Envoy
// 1.33–1.38 (poll_oneoff = ENOSYS, traps on restricted calls during
// _initialize and proxy_on_memory_allocate), through thousands of GCs, some
// of them started inside proxy_on_memory_allocate, after the netpoller has
// started (released 64 MiB for the scavenger, timer sleeps in _initialize
// and in the callback), and never calls poll_oneoff.
func TestProbeSurvivesOldEnvoy(t *testing.T) {
	res := buildProbe(t, true)
	h := &oldEnvoyHost{restrict: true, pluginConfig: []byte(`{"probe":true}`), environ: []string{"PROBE_INIT_SLEEP_MS=2"}}
	ctx := load(t, res, h)

	const rootID = 1
	if err := h.lifecycle(ctx, rootID); err != nil {
		t.Fatalf("lifecycle: %v; logs %q", err, h.logs)
	}
	if !slices.Contains(h.logs, "probe: vm start") || !slices.Contains(h.logs, `probe: configured with "{\"probe\":true}"`) {
		t.Errorf("root lifecycle logs = %q, want the vm start and configuration lines", h.logs)
	}

	const gcsPerRequest = 1500
	lastGCs, gcsInAlloc := 0, 0
	for i := 1; i <= 3; i++ {
		const sleep = 20 * time.Millisecond
		headers := append(probeHeaders("hello-"+strconv.Itoa(i), gcsPerRequest, 64, 40),
			[2]string{"x-probe-sleep-ms", strconv.Itoa(int(sleep / time.Millisecond))})
		start := time.Now()
		action, err := h.request(ctx, rootID, uint64(1+i), headers)
		if took := time.Since(start); took < sleep {
			t.Errorf("request %d took %v, less than the probe's %v sleep", i, took, sleep)
		}
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if action != 0 {
			t.Errorf("request %d: proxy_on_request_headers = %d, want 0 (Continue)", i, action)
		}
		if got, _ := h.header("x-probe-out"); got != "seen:hello-"+strconv.Itoa(i) {
			t.Errorf("request %d: x-probe-out = %q, want %q", i, got, "seen:hello-"+strconv.Itoa(i))
		}
		raw, ok := h.header("x-probe-result")
		if !ok {
			t.Fatalf("request %d: the probe set no x-probe-result; logs: %q", i, h.logs)
		}
		r := parseResult(t, raw)
		if r.mismatches != 0 {
			t.Errorf("request %d: %d header values read back wrong", i, r.mismatches)
		}
		if r.count != i {
			t.Errorf("request %d: shared counter = %d, want %d", i, r.count, i)
		}
		if r.gcs-lastGCs < gcsPerRequest {
			t.Errorf("request %d: %d GCs ran, want at least %d", i, r.gcs-lastGCs, gcsPerRequest)
		}
		lastGCs = r.gcs
		gcsInAlloc += r.gcsInAlloc
	}
	if gcsInAlloc == 0 {
		t.Error("no GC cycle completed inside proxy_on_memory_allocate: the restricted-phase case went untested")
	}
	t.Logf("%d GCs (%d completed inside proxy_on_memory_allocate), %d guest allocations by the host, module %d bytes",
		lastGCs, gcsInAlloc, h.allocCalls, res.Size)

	if h.pollCalls != 0 {
		t.Errorf("poll_oneoff was called %d times, want 0", h.pollCalls)
	}
	if len(h.traps) != 0 || h.exitCode != -1 {
		t.Errorf("traps %q, proc_exit code %d", h.traps, h.exitCode)
	}
	if strings.Contains(h.output.String(), "fatal error") {
		t.Errorf("guest output: %s", h.tail())
	}
}

// TestProbePinsHostBuffers runs a full GC inside every host call that
// returns a buffer, after the guest allocated it and before the host returns
// its address, with GODEBUG=clobberfree=1 so a freed buffer is overwritten at
// once: values must still read back intact, because the glue keeps buffers
// reachable until the call that asked for them returned.
func TestProbePinsHostBuffers(t *testing.T) {
	res := buildProbe(t, true)
	h := &oldEnvoyHost{restrict: true, gcInCall: true, environ: []string{"GODEBUG=clobberfree=1"}}
	ctx := load(t, res, h)
	if err := h.lifecycle(ctx, 1); err != nil {
		t.Fatalf("lifecycle: %v", err)
	}
	if _, err := h.request(ctx, 1, 2, [][2]string{
		{"x-probe-in", "pinned"},
		{"x-probe-gc", "50"},
		{"x-probe-big", bigHeader(8 << 10)},
		{"x-probe-big-reads", "100"},
	}); err != nil {
		t.Fatalf("request: %v", err)
	}
	raw, _ := h.header("x-probe-result")
	r := parseResult(t, raw)
	t.Logf("%d GCs, %d guest allocations by the host", r.gcs, h.allocCalls)
	if r.mismatches != 0 {
		t.Errorf("%d values read back wrong: a buffer handed to the host was freed too early", r.mismatches)
	}
	if h.pollCalls != 0 {
		t.Errorf("poll_oneoff was called %d times, want 0", h.pollCalls)
	}
}

// TestArenaServesEverySize reads values of sizes around the glue's arena
// block sizes (4 KiB first, doubling to 256 KiB, larger ones in blocks of
// their own), three times in one callback and across callbacks, with a GC
// inside every host call: every value reads back intact, and no two values
// of one callback share memory. A value the arena cannot hold yet is first
// refused by the allocator (the glue's unreserved try, abiglue_memory.go),
// then read again after the glue reserved for the map: that path is taken.
func TestArenaServesEverySize(t *testing.T) {
	res := buildProbe(t, true)
	h := &oldEnvoyHost{restrict: true, gcInCall: true, environ: []string{"GODEBUG=clobberfree=1"}}
	ctx := load(t, res, h)
	if err := h.lifecycle(ctx, 1); err != nil {
		t.Fatalf("lifecycle: %v", err)
	}
	id := uint64(2)
	// The first block is 4 KiB: a 20000-byte value first must get a block
	// that holds it, not merely one twice as large.
	for _, size := range []int{20000, 1, 7, 8, 4095, 4096, 4097, 5000, 9000, 70000, 131064, 131073, 200000, 300000, 10, 5000} {
		if _, err := h.request(ctx, 1, id, [][2]string{
			{"x-probe-in", "size-" + strconv.Itoa(size)},
			{"x-probe-big", bigHeader(size)},
			{"x-probe-big-reads", "3"},
		}); err != nil {
			t.Fatalf("request with a %d-byte value: %v", size, err)
		}
		id++
		raw, _ := h.header("x-probe-result")
		if r := parseResult(t, raw); r.mismatches != 0 {
			t.Errorf("%d-byte values: %d read back wrong or shared memory", size, r.mismatches)
		}
	}
	if h.allocRefusals == 0 {
		t.Error("no read was refused and read again: the retry path went untested")
	}
}

// TestUnpatchedProbeAbortsAtGC shows why the runtime overlay exists: the
// same probe, driven the same way, built without it dies. Forced GCs on a
// small heap alone do not reach poll_oneoff (the netpoller starts with the
// first timer); the released 64 MiB block gives the background scavenger
// work, it sleeps on a timer, and from then on every GC's start-the-world
// polls and the runtime throws on ENOSYS. A timer wait during _initialize
// reaches poll_oneoff there, where Envoy before 1.39 traps.
func TestUnpatchedProbeAbortsAtGC(t *testing.T) {
	res := buildProbe(t, false)

	t.Run("GC after the netpoller started", func(t *testing.T) {
		h := &oldEnvoyHost{restrict: false}
		ctx := load(t, res, h)
		err := h.lifecycle(ctx, 1)
		if err != nil {
			t.Fatalf("lifecycle: %v", err)
		}
		_, err = h.request(ctx, 1, 2, probeHeaders("x", 50, 64, 0))
		if err == nil {
			t.Fatal("the unpatched probe survived GCs under a host answering poll_oneoff with ENOSYS")
		}
		if h.pollCalls == 0 || !strings.Contains(h.output.String(), "poll_oneoff failed") {
			t.Errorf("error %v after %d poll_oneoff calls; guest output %q lacks the runtime's poll_oneoff failure", err, h.pollCalls, h.tail())
		}
		t.Logf("aborted after %d poll_oneoff calls: %v", h.pollCalls, firstLine(err.Error()))
	})

	t.Run("sleep during _initialize", func(t *testing.T) {
		// Long enough that the timer has not fired when the scheduler
		// parks, even on a loaded machine (1 ms flaked).
		h := &oldEnvoyHost{restrict: true, environ: []string{"PROBE_INIT_SLEEP_MS=200"}}
		ctx := load(t, res, h)
		err := h.lifecycle(ctx, 1)
		if err == nil {
			t.Fatal("the unpatched probe slept in _initialize without calling poll_oneoff")
		}
		if !slices.Contains(h.traps, "restricted_callback: poll_oneoff called during _initialize") {
			t.Errorf("error %v, traps %q: want poll_oneoff refused during _initialize", err, h.traps)
		}
		t.Logf("aborted: %v", firstLine(err.Error()))
	})
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestPanicMessageSurvives: an unrecovered panic in a callback must still
// print its own message on a host without poll_oneoff. The runtime's crash
// path (freezetheworld) calls usleep, which the unpatched runtime implements
// with poll_oneoff and throws on ENOSYS; the patched one waits on the clock.
func TestPanicMessageSurvives(t *testing.T) {
	for _, patched := range []bool{true, false} {
		t.Run(fmt.Sprintf("patched=%v", patched), func(t *testing.T) {
			res := buildProbe(t, patched)
			h := &oldEnvoyHost{restrict: true}
			ctx := load(t, res, h)
			if err := h.lifecycle(ctx, 1); err != nil {
				t.Fatalf("lifecycle: %v", err)
			}
			_, err := h.request(ctx, 1, 2, [][2]string{{"x-probe-panic", "1"}})
			if err == nil {
				t.Fatal("the probe survived its own panic")
			}
			out := h.output.String()
			head := strings.SplitN(out, "\n", 4)
			t.Logf("poll_oneoff calls %d; guest output begins %q", h.pollCalls, head[:min(3, len(head))])
			if patched {
				if !strings.Contains(out, "panic: probe: requested panic") || h.pollCalls != 0 {
					t.Errorf("patched runtime: want the panic message and no poll_oneoff call; output %q", h.tail())
				}
			} else if h.pollCalls == 0 || !strings.Contains(out, "fatal error: wasi_snapshot_preview1.poll_oneoff") {
				t.Errorf("unpatched runtime: the crash path did not end in poll_oneoff's failure; output %q", h.tail())
			}
		})
	}
}

// TestProbeModuleShape checks the built module with the same check the build
// runs, and pins down the imports a plain SDK plugin ends up with.
func TestProbeModuleShape(t *testing.T) {
	res := buildProbe(t, true)
	m, err := wasmcheck.CheckFile(res.Output)
	if err != nil {
		t.Fatal(err)
	}
	imports, exports := m.Names()
	t.Logf("size %d bytes\nimports: %s\nexports: %s", res.Size, strings.Join(imports, " "), strings.Join(exports, " "))
	for _, imp := range imports {
		if strings.HasPrefix(imp, "env.") && !slices.Contains(probeEnvImports, strings.TrimPrefix(imp, "env.")) {
			t.Errorf("import %s: not one the probe uses (dead-code elimination should drop it)", imp)
		}
	}
}

// probeEnvImports are the host functions the probe's SDK calls reach.
var probeEnvImports = []string{
	"proxy_log",
	"proxy_get_buffer_bytes",
	"proxy_get_header_map_size", // asked before every header read (abiglue_memory.go reserveForMap)
	"proxy_get_header_map_value",
	"proxy_replace_header_map_value",
	"proxy_get_shared_data",
	"proxy_set_shared_data",
	"proxy_set_effective_context",
}

// TestGlueVet runs go vet over the SDK's internal package as the plugin build
// compiles it (GOOS=wasip1, the abiglue tag, the generated go.work), since
// the repository's own go vet never compiles the glue. Findings in the SDK's
// own files are not ours to fix and are ignored; any in the glue fail.
func TestGlueVet(t *testing.T) {
	buildProbe(t, true)
	cmd := exec.Command("go", "vet", "-tags", "abiglue", builder.SDKModule+"/proxywasm/internal")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOWORK="+filepath.Join(buildDir, "work", "go.work"))
	out, err := cmd.CombinedOutput()
	var sdkFindings int
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.Contains(line, "abiglue_"):
			t.Errorf("vet: %s", line)
		case strings.Contains(line, "sdk/proxywasm/"):
			sdkFindings++
		}
	}
	if err != nil && sdkFindings == 0 && !t.Failed() {
		t.Fatalf("go vet failed: %v\n%s", err, out)
	}
}
