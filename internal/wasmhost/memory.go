package wasmhost

import "github.com/tetratelabs/wazero/api"

// Guest-memory helpers shared by the host functions. Out-parameters are
// 32-bit little-endian words (ABI 0.2.1 on wasm32).

// copyOut places data in guest memory through proxy_on_memory_allocate and
// writes its address and size to ptrPtr and sizePtr. Empty data is returned
// as (0, 0) without an allocation, as Envoy's WasmBase::copyToPointerSize
// does.
func (vm *VM) copyOut(mem api.Memory, data []byte, ptrPtr, sizePtr uint32) Status {
	var ptr uint32
	if len(data) > 0 {
		p, err := vm.alloc(uint32(len(data)))
		if err != nil {
			panic(err) // a trap inside the allocator fails the calling callback
		}
		if p == 0 || !mem.Write(p, data) {
			return StatusInvalidMemoryAccess
		}
		ptr = p
	}
	if !mem.WriteUint32Le(ptrPtr, ptr) || !mem.WriteUint32Le(sizePtr, uint32(len(data))) {
		return StatusInvalidMemoryAccess
	}
	return StatusOK
}

// copyOutString is copyOut for a string, without converting it.
func (vm *VM) copyOutString(mem api.Memory, s string, ptrPtr, sizePtr uint32) Status {
	var ptr uint32
	if len(s) > 0 {
		p, err := vm.alloc(uint32(len(s)))
		if err != nil {
			panic(err)
		}
		if p == 0 || !mem.WriteString(p, s) {
			return StatusInvalidMemoryAccess
		}
		ptr = p
	}
	if !mem.WriteUint32Le(ptrPtr, ptr) || !mem.WriteUint32Le(sizePtr, uint32(len(s))) {
		return StatusInvalidMemoryAccess
	}
	return StatusOK
}

// u32 reads the i32 parameter i of a host-function stack.
func u32(stack []uint64, i int) uint32 { return uint32(stack[i]) }

// ret stores a status as the single result.
func ret(stack []uint64, st Status) { stack[0] = uint64(st) }
