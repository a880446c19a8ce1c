package wasmhost

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Envoy 1.33–1.38 refuses poll_oneoff while the guest allocates memory for
// the host (proxy-wasm-cpp-host PR #433): a Go GC that starts inside
// proxy_on_memory_allocate reaches it and fails the VM.
func TestRestrictedCallDuringAllocationTraps(t *testing.T) {
	imports := []wasmImport{
		{module: "wasi_snapshot_preview1", name: "poll_oneoff", params: 4, result: true},
		{module: "env", name: "proxy_get_header_map_pairs", params: 3, result: true},
	}
	funcs := withBody(emptyFuncs(), "proxy_on_memory_allocate", callImport(0, 4, true))
	// proxy_get_header_map_pairs(REQUEST_HEADERS, 100, 104) makes the host
	// allocate.
	funcs = withBody(funcs, "proxy_on_request_headers", []byte{0x41, 0x00, 0x41, 0xe4, 0x00, 0x41, 0xe8, 0x00, 0x10, 0x01, 0x1a})
	h, err := New(context.Background(), Options{Wasm: assembleWithImports(imports, funcs)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	_, err = h.Simulate(Exchange{Request: get("/"), Response: ok200()})
	var rc *RestrictedCallError
	if !errors.As(err, &rc) || rc.Func != "wasi_snapshot_preview1.poll_oneoff" || rc.Phase != "proxy_on_memory_allocate" {
		t.Fatalf("Simulate = %v, want a restricted poll_oneoff during allocation", err)
	}
	if st := h.Stats(); st.Traps != 1 {
		t.Errorf("traps = %d", st.Traps)
	}
}

func TestRestrictedWASIDuringInitialize(t *testing.T) {
	imports := []wasmImport{{module: "wasi_snapshot_preview1", name: "sched_yield", result: true}}
	funcs := withBody(emptyFuncs(), "_initialize", callImport(0, 0, true))
	_, err := New(context.Background(), Options{Wasm: assembleWithImports(imports, funcs)})
	var rc *RestrictedCallError
	if !errors.As(err, &rc) || rc.Func != "wasi_snapshot_preview1.sched_yield" || rc.Phase != "_initialize" {
		t.Fatalf("New = %v, want a restricted sched_yield", err)
	}
	// Outside _initialize the same call is fine.
	funcs = withBody(emptyFuncs(), "proxy_on_request_headers", callImport(0, 0, true))
	h, err := New(context.Background(), Options{Wasm: assembleWithImports(imports, funcs)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	if _, err := h.Simulate(Exchange{Request: get("/")}); err != nil {
		t.Fatal(err)
	}
}

func TestModuleOutsideEnvoyWASIDoesNotLoad(t *testing.T) {
	imports := []wasmImport{{module: "wasi_snapshot_preview1", name: "fd_filestat_get", params: 2, result: true}}
	wasm := assembleWithImports(imports, emptyFuncs())
	_, err := New(context.Background(), Options{Wasm: wasm})
	if err == nil || !strings.Contains(err.Error(), "fd_filestat_get") {
		t.Fatalf("New = %v, want a refusal naming fd_filestat_get", err)
	}
	h, err := New(context.Background(), Options{Wasm: wasm, FullWASI: true})
	if err != nil {
		t.Fatalf("FullWASI: %v", err)
	}
	h.Close(context.Background())
}

func TestModuleWithoutABIMarkerDoesNotLoad(t *testing.T) {
	var funcs []wasmFunc
	for _, f := range emptyFuncs() {
		if !strings.HasPrefix(f.name, "proxy_abi_version") {
			funcs = append(funcs, f)
		}
	}
	if _, err := New(context.Background(), Options{Wasm: assemble(funcs)}); err == nil || !strings.Contains(err.Error(), "ABI version") {
		t.Fatalf("New = %v", err)
	}
}
