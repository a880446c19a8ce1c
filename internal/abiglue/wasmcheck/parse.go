package wasmcheck

import (
	"errors"
	"fmt"
)

// ValType is a WebAssembly value type.
type ValType byte

// The value types a proxy-wasm module uses.
const (
	I32 ValType = 0x7f
	I64 ValType = 0x7e
	F32 ValType = 0x7d
	F64 ValType = 0x7c
)

func (t ValType) String() string {
	switch t {
	case I32:
		return "i32"
	case I64:
		return "i64"
	case F32:
		return "f32"
	case F64:
		return "f64"
	}
	return fmt.Sprintf("valtype(0x%02x)", byte(t))
}

// FuncType is a function signature.
type FuncType struct {
	Params  []ValType
	Results []ValType
}

func (f FuncType) String() string {
	return fmt.Sprintf("%v -> %v", f.Params, f.Results)
}

// Import is one entry of the import section. Type is set for function
// imports only (Kind == KindFunc).
type Import struct {
	Module, Name string
	Kind         Kind
	Type         FuncType
}

// Export is one entry of the export section. Type is set for function exports.
type Export struct {
	Name string
	Kind Kind
	Type FuncType
}

// Kind is the kind of an import or export.
type Kind byte

// Import/export kinds.
const (
	KindFunc   Kind = 0
	KindTable  Kind = 1
	KindMemory Kind = 2
	KindGlobal Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindFunc:
		return "func"
	case KindTable:
		return "table"
	case KindMemory:
		return "memory"
	case KindGlobal:
		return "global"
	}
	return fmt.Sprintf("kind(%d)", byte(k))
}

// Module is what Parse reads from a binary module: its imports and exports.
type Module struct {
	Imports []Import
	Exports []Export
}

// Section ids the parser reads.
const (
	secType     = 1
	secImport   = 2
	secFunction = 3
	secExport   = 7
)

var wasmHeader = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// Parse reads the type, import, function and export sections of a binary
// WebAssembly module (version 1). It does not validate code.
func Parse(wasm []byte) (*Module, error) {
	if len(wasm) < len(wasmHeader) || string(wasm[:len(wasmHeader)]) != string(wasmHeader) {
		return nil, errors.New("not a WebAssembly binary module (version 1)")
	}
	r := &reader{b: wasm, off: len(wasmHeader)}
	var (
		types     []FuncType
		funcTypes []uint32 // type index of every function, imports first
		m         Module
		exportIdx []uint32
	)
	for !r.done() {
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			break
		}
		body := r.sub(int(size))
		switch id {
		case secType:
			n := body.u32()
			for i := uint32(0); i < n && body.err == nil; i++ {
				if form := body.byte(); form != 0x60 {
					body.fail("type %d: form 0x%02x is not a function type", i, form)
					break
				}
				types = append(types, FuncType{Params: body.valTypes(), Results: body.valTypes()})
			}
		case secImport:
			n := body.u32()
			for i := uint32(0); i < n && body.err == nil; i++ {
				imp := Import{Module: body.name(), Name: body.name(), Kind: Kind(body.byte())}
				switch imp.Kind {
				case KindFunc:
					funcTypes = append(funcTypes, body.u32())
				case KindTable:
					body.byte() // element type
					body.limits()
				case KindMemory:
					body.limits()
				case KindGlobal:
					body.byte() // value type
					body.byte() // mutability
				default:
					body.fail("import %s.%s: unknown kind %d", imp.Module, imp.Name, imp.Kind)
				}
				m.Imports = append(m.Imports, imp)
			}
		case secFunction:
			n := body.u32()
			for i := uint32(0); i < n && body.err == nil; i++ {
				funcTypes = append(funcTypes, body.u32())
			}
		case secExport:
			n := body.u32()
			for i := uint32(0); i < n && body.err == nil; i++ {
				m.Exports = append(m.Exports, Export{Name: body.name(), Kind: Kind(body.byte())})
				exportIdx = append(exportIdx, body.u32())
			}
		}
		if body.err != nil {
			return nil, fmt.Errorf("section %d: %w", id, body.err)
		}
	}
	if r.err != nil {
		return nil, r.err
	}

	typeOf := func(fn uint32) (FuncType, error) {
		if int(fn) >= len(funcTypes) {
			return FuncType{}, fmt.Errorf("function index %d out of range", fn)
		}
		if t := funcTypes[fn]; int(t) < len(types) {
			return types[t], nil
		}
		return FuncType{}, fmt.Errorf("function %d: type index %d out of range", fn, funcTypes[fn])
	}
	fn := uint32(0)
	for i := range m.Imports {
		if m.Imports[i].Kind != KindFunc {
			continue
		}
		t, err := typeOf(fn)
		if err != nil {
			return nil, err
		}
		m.Imports[i].Type = t
		fn++
	}
	for i := range m.Exports {
		if m.Exports[i].Kind != KindFunc {
			continue
		}
		t, err := typeOf(exportIdx[i])
		if err != nil {
			return nil, fmt.Errorf("export %q: %w", m.Exports[i].Name, err)
		}
		m.Exports[i].Type = t
	}
	return &m, nil
}

// reader decodes the binary format; the first error sticks and every later
// read returns zero values.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("at byte %d: %s", r.off, fmt.Sprintf(format, args...))
	}
}

func (r *reader) done() bool { return r.err != nil || r.off >= len(r.b) }

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("unexpected end of data")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

// u32 reads an unsigned LEB128 value of at most 32 bits.
func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.fail("LEB128 value too long")
	return 0
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail("length %d past the end of data", n)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) sub(n int) *reader {
	return &reader{b: r.bytes(n), err: r.err}
}

func (r *reader) name() string { return string(r.bytes(int(r.u32()))) }

func (r *reader) valTypes() []ValType {
	n := r.u32()
	out := make([]ValType, 0, min(n, 64))
	for i := uint32(0); i < n && r.err == nil; i++ {
		out = append(out, ValType(r.byte()))
	}
	return out
}

func (r *reader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}
