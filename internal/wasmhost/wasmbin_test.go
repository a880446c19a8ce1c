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

// assemble builds a module with one memory page exported as "memory" and
// the given functions exported under their names.
func assemble(funcs []wasmFunc) []byte {
	var types, fsec, exports, code []byte
	types = append(types, leb(len(funcs))...)
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
		exports = append(exports, leb(i)...)
		code = append(code, leb(len(body))...)
		code = append(code, body...)
	}
	exports = append(exports, str("memory")...)
	exports = append(exports, 0x02, 0x00)
	mod := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	mod = append(mod, section(1, types)...)
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
func emptyPlugin() []byte {
	return assemble([]wasmFunc{
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
	})
}
