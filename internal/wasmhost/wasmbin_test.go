package wasmhost

// A hand-assembled proxy-wasm module whose callbacks do nothing and return
// at once: it has no language runtime, so it measures the host alone.

type wasmFunc struct {
	name   string
	params int    // i32 parameters
	result int    // -1: none; otherwise the i32 constant returned
	body   []byte // optional body (without the trailing end)
}

func leb(v int) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			out = append(out, b|0x80)
			continue
		}
		return append(out, b)
	}
}

func section(id byte, content []byte) []byte {
	return append(append([]byte{id}, leb(len(content))...), content...)
}

func str(s string) []byte { return append(leb(len(s)), s...) }

// wasmImport is an imported function with i32 parameters.
type wasmImport struct {
	module, name string
	params       int
	result       bool // one i32 result
}

// assemble builds a module with one memory page exported as "memory" and
// the given functions exported under their names.
func assemble(funcs []wasmFunc) []byte { return assembleWithImports(nil, funcs) }

// assembleWithImports is assemble with imported functions; they take the
// function indices 0..len(imports)-1, so a body calls import k with
// 0x10 k.
func assembleWithImports(imports []wasmImport, funcs []wasmFunc) []byte {
	var types, fsec, exports, code, isec []byte
	types = append(types, leb(len(funcs)+len(imports))...)
	fsec = append(fsec, leb(len(funcs))...)
	exports = append(exports, leb(len(funcs)+1)...)
	code = append(code, leb(len(funcs))...)
	for i, f := range funcs {
		types = append(types, 0x60)
		types = append(types, leb(f.params)...)
		for j := 0; j < f.params; j++ {
			types = append(types, 0x7f)
		}
		body := []byte{0x00} // no locals
		if f.result >= 0 {
			types = append(types, 0x01, 0x7f)
			body = append(body, f.body...)
			body = append(body, 0x41)
			body = append(body, sleb(f.result)...)
		} else {
			types = append(types, 0x00)
			body = append(body, f.body...)
		}
		body = append(body, 0x0b)
		fsec = append(fsec, leb(i)...)
		exports = append(exports, str(f.name)...)
		exports = append(exports, 0x00)
		exports = append(exports, leb(len(imports)+i)...)
		code = append(code, leb(len(body))...)
		code = append(code, body...)
	}
	isec = append(isec, leb(len(imports))...)
	for k, im := range imports {
		types = append(types, 0x60)
		types = append(types, leb(im.params)...)
		for j := 0; j < im.params; j++ {
			types = append(types, 0x7f)
		}
		if im.result {
			types = append(types, 0x01, 0x7f)
		} else {
			types = append(types, 0x00)
		}
		isec = append(isec, str(im.module)...)
		isec = append(isec, str(im.name)...)
		isec = append(isec, 0x00)
		isec = append(isec, leb(len(funcs)+k)...)
	}
	exports = append(exports, str("memory")...)
	exports = append(exports, 0x02, 0x00)
	mod := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	mod = append(mod, section(1, types)...)
	if len(imports) > 0 {
		mod = append(mod, section(2, isec)...)
	}
	mod = append(mod, section(3, fsec)...)
	mod = append(mod, section(5, []byte{0x01, 0x00, 0x01})...) // one memory, min 1 page
	mod = append(mod, section(7, exports)...)
	mod = append(mod, section(10, code)...)
	return mod
}

func sleb(v int) []byte {
	var out []byte
	for {
		b := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && b&0x40 == 0) || (v == -1 && b&0x40 != 0) {
			return append(out, b)
		}
		out = append(out, b|0x80)
	}
}

// emptyPlugin is a proxy-wasm module whose callbacks do nothing.
func emptyPlugin() []byte { return assemble(emptyFuncs()) }

// callImport is the body "call import k with n zero i32 arguments, drop the
// result".
func callImport(k, n int, result bool) []byte {
	var b []byte
	for i := 0; i < n; i++ {
		b = append(b, 0x41, 0x00)
	}
	b = append(b, 0x10)
	b = append(b, leb(k)...)
	if result {
		b = append(b, 0x1a)
	}
	return b
}

// withBody returns funcs with the body of name replaced.
func withBody(funcs []wasmFunc, name string, body []byte) []wasmFunc {
	out := append([]wasmFunc(nil), funcs...)
	for i := range out {
		if out[i].name == name {
			out[i].body = body
		}
	}
	return out
}

func emptyFuncs() []wasmFunc {
	return []wasmFunc{
		{name: "_initialize", result: -1},
		{name: "proxy_abi_version_0_2_1", result: -1},
		{name: "proxy_on_memory_allocate", params: 1, result: 1024},
		{name: "proxy_on_context_create", params: 2, result: -1},
		{name: "proxy_on_vm_start", params: 2, result: 1},
		{name: "proxy_on_configure", params: 2, result: 1},
		{name: "proxy_on_request_headers", params: 3, result: 0},
		{name: "proxy_on_response_headers", params: 3, result: 0},
		{name: "proxy_on_log", params: 1, result: -1},
		{name: "proxy_on_done", params: 1, result: 1},
		{name: "proxy_on_delete", params: 1, result: -1},
	}
}
