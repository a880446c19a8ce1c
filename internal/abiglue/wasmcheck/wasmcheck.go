// Package wasmcheck checks that a built proxy-wasm plugin is loadable by
// Envoy 1.33 and later: the exports a proxy-wasm ABI 0.2.1 HTTP filter needs,
// imports only from "env" and "wasi_snapshot_preview1", WASI imports within
// the 18 functions Envoy 1.33–1.38 provides, and 32-bit ABI signatures.
package wasmcheck

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Import module names a plugin may use.
const (
	ModuleEnv  = "env"
	ModuleWASI = "wasi_snapshot_preview1"
)

// RequiredExports are the exports every plugin built here must have: the
// reactor initialiser, the ABI 0.2.1 marker, memory allocation and the
// lifecycle and HTTP callbacks.
var RequiredExports = []string{
	"_initialize",
	"proxy_abi_version_0_2_1",
	"proxy_on_memory_allocate",
	"proxy_on_vm_start",
	"proxy_on_configure",
	"proxy_on_context_create",
	"proxy_on_request_headers",
	"proxy_on_request_body",
	"proxy_on_response_headers",
	"proxy_on_response_body",
	"proxy_on_log",
	"proxy_on_done",
	"proxy_on_delete",
	"proxy_on_tick",
}

// EnvoyWASI is the WASI surface of Envoy 1.33–1.38 (proxy-wasm-cpp-host at the
// commits those releases pin): exactly these 18 functions exist, and a module
// importing any other WASI function fails to load.
var EnvoyWASI = []string{
	"args_get",
	"args_sizes_get",
	"clock_time_get",
	"environ_get",
	"environ_sizes_get",
	"fd_close",
	"fd_fdstat_get",
	"fd_fdstat_set_flags",
	"fd_prestat_dir_name",
	"fd_prestat_get",
	"fd_read",
	"fd_seek",
	"fd_write",
	"path_open",
	"poll_oneoff",
	"proc_exit",
	"random_get",
	"sched_yield",
}

// i64Params names the env imports whose ABI signature has an i64 parameter
// (the metric value), by position; every other proxy-wasm value is an i32.
var i64Params = map[string]int{
	"proxy_increment_metric": 1,
	"proxy_record_metric":    1,
}

// CheckFile reads a module from path and checks it (see Check).
func CheckFile(path string) (*Module, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Check(wasm)
	if err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Check parses a module and verifies it against the rules of this package.
// The error lists every violation found; the parsed module is returned even
// then (nil only if the binary could not be parsed).
func Check(wasm []byte) (*Module, error) {
	m, err := Parse(wasm)
	if err != nil {
		return nil, fmt.Errorf("parsing module: %w", err)
	}
	var problems []string
	exports := make(map[string]Export, len(m.Exports))
	for _, e := range m.Exports {
		exports[e.Name] = e
	}
	for _, name := range RequiredExports {
		e, ok := exports[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("missing export %q", name))
		case e.Kind != KindFunc:
			problems = append(problems, fmt.Sprintf("export %q is a %v, not a function", name, e.Kind))
		}
	}
	for _, e := range m.Exports {
		if e.Kind == KindFunc && strings.HasPrefix(e.Name, "proxy_") && !allI32(e.Type, -1) {
			problems = append(problems, fmt.Sprintf("export %q has signature %v; the proxy-wasm ABI passes only i32", e.Name, e.Type))
		}
	}
	for _, imp := range m.Imports {
		switch {
		case imp.Kind != KindFunc:
			problems = append(problems, fmt.Sprintf("import %s.%s is a %v; only functions may be imported", imp.Module, imp.Name, imp.Kind))
		case imp.Module == ModuleEnv:
			if !envSignatureOK(imp) {
				problems = append(problems, fmt.Sprintf("import env.%s has signature %v, not the proxy-wasm ABI's", imp.Name, imp.Type))
			}
		case imp.Module == ModuleWASI:
			if !slices.Contains(EnvoyWASI, imp.Name) {
				problems = append(problems, fmt.Sprintf("import %s.%s is not among the 18 WASI functions Envoy 1.33-1.38 provides", imp.Module, imp.Name))
			}
		default:
			problems = append(problems, fmt.Sprintf("import %s.%s is from module %q; only %q and %q are allowed", imp.Module, imp.Name, imp.Module, ModuleEnv, ModuleWASI))
		}
	}
	if len(problems) > 0 {
		return m, errors.New(strings.Join(problems, "; "))
	}
	return m, nil
}

// envSignatureOK reports whether an env import uses only i32 values, or for
// the metric calls i32 everywhere but the i64 value.
func envSignatureOK(imp Import) bool {
	at, ok := i64Params[imp.Name]
	if !ok {
		return allI32(imp.Type, -1)
	}
	return len(imp.Type.Params) > at && imp.Type.Params[at] == I64 && allI32(imp.Type, at)
}

// allI32 reports whether every parameter and result of t is an i32, except
// the parameter at position except (ignored; -1 for none).
func allI32(t FuncType, except int) bool {
	for i, p := range t.Params {
		if i != except && p != I32 {
			return false
		}
	}
	for _, r := range t.Results {
		if r != I32 {
			return false
		}
	}
	return true
}

// Names returns "module.name" for every function import and the name of
// every function export, in module order: a compact summary for reports.
func (m *Module) Names() (imports, exports []string) {
	for _, imp := range m.Imports {
		if imp.Kind == KindFunc {
			imports = append(imports, imp.Module+"."+imp.Name)
		}
	}
	for _, e := range m.Exports {
		if e.Kind == KindFunc {
			exports = append(exports, e.Name)
		}
	}
	return imports, exports
}
