package wasmcheck

import (
	"strings"
	"testing"
)

// moduleSpec describes a synthetic module: function imports and exports with
// their signatures (code is not needed by Parse).
type moduleSpec struct {
	imports []specImport
	exports []specExport
}

type specImport struct {
	module, name string
	sig          FuncType
}

type specExport struct {
	name string
	sig  FuncType
}

func uleb(v uint32) []byte {
	var out []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, c|0x80)
			continue
		}
		return append(out, c)
	}
}

func str(s string) []byte { return append(uleb(uint32(len(s))), s...) }

func section(id byte, body []byte) []byte {
	return append(append([]byte{id}, uleb(uint32(len(body)))...), body...)
}

func vec(items [][]byte) []byte {
	out := uleb(uint32(len(items)))
	for _, it := range items {
		out = append(out, it...)
	}
	return out
}

func valTypes(ts []ValType) []byte {
	out := uleb(uint32(len(ts)))
	for _, t := range ts {
		out = append(out, byte(t))
	}
	return out
}

// encode writes the module in the binary format: one type per function.
func (s moduleSpec) encode() []byte {
	var types, imports, funcs, exports [][]byte
	for i, imp := range s.imports {
		types = append(types, append(append([]byte{0x60}, valTypes(imp.sig.Params)...), valTypes(imp.sig.Results)...))
		imports = append(imports, append(append(str(imp.module), str(imp.name)...), append([]byte{0}, uleb(uint32(i))...)...))
	}
	for i, e := range s.exports {
		ti := uint32(len(s.imports) + i)
		types = append(types, append(append([]byte{0x60}, valTypes(e.sig.Params)...), valTypes(e.sig.Results)...))
		funcs = append(funcs, uleb(ti))
		exports = append(exports, append(str(e.name), append([]byte{0}, uleb(ti)...)...))
	}
	out := append([]byte{}, wasmHeader...)
	out = append(out, section(secType, vec(types))...)
	out = append(out, section(secImport, vec(imports))...)
	out = append(out, section(secFunction, vec(funcs))...)
	out = append(out, section(secExport, vec(exports))...)
	return out
}

func sig(params, results int) FuncType {
	t := FuncType{}
	for i := 0; i < params; i++ {
		t.Params = append(t.Params, I32)
	}
	for i := 0; i < results; i++ {
		t.Results = append(t.Results, I32)
	}
	return t
}

// validSpec is a module shaped like a real plugin.
func validSpec() moduleSpec {
	s := moduleSpec{
		imports: []specImport{
			{ModuleWASI, "fd_write", sig(4, 1)},
			{ModuleWASI, "clock_time_get", FuncType{Params: []ValType{I32, I64, I32}, Results: []ValType{I32}}},
			{ModuleWASI, "poll_oneoff", sig(4, 1)},
			{ModuleEnv, "proxy_log", sig(3, 1)},
			{ModuleEnv, "proxy_increment_metric", FuncType{Params: []ValType{I32, I64}, Results: []ValType{I32}}},
		},
	}
	for _, name := range RequiredExports {
		t := sig(2, 1)
		if name == "_initialize" || name == "proxy_abi_version_0_2_1" {
			t = sig(0, 0)
		}
		s.exports = append(s.exports, specExport{name, t})
	}
	return s
}

func TestCheckAcceptsPluginShape(t *testing.T) {
	m, err := Check(validSpec().encode())
	if err != nil {
		t.Fatal(err)
	}
	imports, exports := m.Names()
	if len(imports) != 5 || imports[3] != "env.proxy_log" {
		t.Errorf("imports = %q", imports)
	}
	if len(exports) != len(RequiredExports) {
		t.Errorf("exports = %q", exports)
	}
	if got := m.Imports[1].Type.String(); got != "[i32 i64 i32] -> [i32]" {
		t.Errorf("clock_time_get signature = %s", got)
	}
}

func TestCheckRejects(t *testing.T) {
	tests := map[string]struct {
		mutate func(*moduleSpec)
		want   string
	}{
		"missing export": {
			mutate: func(s *moduleSpec) { s.exports = s.exports[:len(s.exports)-1] },
			want:   `missing export "proxy_on_tick"`,
		},
		"foreign module": {
			mutate: func(s *moduleSpec) { s.imports = append(s.imports, specImport{"gojs", "runtime.ticks", sig(0, 0)}) },
			want:   `import gojs.runtime.ticks is from module "gojs"`,
		},
		"WASI call Envoy 1.38 lacks": {
			mutate: func(s *moduleSpec) { s.imports = append(s.imports, specImport{ModuleWASI, "sock_accept", sig(3, 1)}) },
			want:   "wasi_snapshot_preview1.sock_accept is not among the 18 WASI functions",
		},
		"64-bit export parameter": {
			mutate: func(s *moduleSpec) {
				s.exports[2].sig = FuncType{Params: []ValType{I64}, Results: []ValType{I32}}
			},
			want: `export "proxy_on_memory_allocate" has signature [i64] -> [i32]`,
		},
		"64-bit host call size": {
			mutate: func(s *moduleSpec) {
				s.imports[3].sig = FuncType{Params: []ValType{I32, I32, I64}, Results: []ValType{I32}}
			},
			want: "import env.proxy_log has signature",
		},
		"metric value not 64-bit": {
			mutate: func(s *moduleSpec) { s.imports[4].sig = sig(2, 1) },
			want:   "import env.proxy_increment_metric has signature",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := validSpec()
			tc.mutate(&s)
			_, err := Check(s.encode())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseRejectsBrokenBinaries(t *testing.T) {
	valid := validSpec().encode()
	for name, bin := range map[string][]byte{
		"empty":        nil,
		"not wasm":     []byte("\x7fELF\x02\x01\x01\x00"),
		"truncated":    valid[:len(valid)-7],
		"section size": append(append([]byte{}, wasmHeader...), secType, 0xff, 0xff, 0xff, 0xff, 0x0f),
	} {
		if _, err := Parse(bin); err == nil {
			t.Errorf("%s: Parse accepted it", name)
		}
	}
}
