//go:build wasip1 && abiglue

package internal

import "unsafe"

// hostBuffers keeps every buffer handed to the host by proxy_on_memory_allocate
// reachable until the host call that asked for it has returned and its data
// has been taken over by a Go pointer (takeHostBuffer). The host only keeps a
// 32-bit address, which the garbage collector cannot see: without this list a
// GC started by a second allocation in the same host call (proxy_get_shared_data
// allocates once, header maps can be large) would free the first buffer.
//
// The proxy-wasm guest is single-threaded and the host calls
// proxy_on_memory_allocate only while one of our imports is running, so a plain
// slice suffices.
var hostBuffers [][]byte

// abiOnMemoryAllocate is proxy_on_memory_allocate(size) -> ptr: the host asks for
// size bytes of guest memory to write a result into. 0 would mean failure, so a
// zero-size request still gets a (one-byte) buffer.
//
//go:wasmexport proxy_on_memory_allocate
func abiOnMemoryAllocate(size uint32) *byte {
	n := size
	if n == 0 {
		n = 1
	}
	buf := make([]byte, n)
	hostBuffers = append(hostBuffers, buf)
	return &buf[0]
}

// takeHostBuffer turns the address/size pair a host call wrote into a Go
// pointer into the pinned buffer that holds it, then releases every pin: from
// here on the returned pointer keeps the buffer alive. ok is false when the
// address does not lie inside a buffer this module handed out (a host
// violating the ABI); a zero size always yields (nil, true).
func takeHostBuffer(addr, size uint32) (data *byte, ok bool) {
	defer releaseHostBuffers()
	if size == 0 {
		return nil, true
	}
	end := uint64(addr) + uint64(size)
	for _, b := range hostBuffers {
		start := uint64(uintptr(unsafe.Pointer(&b[0])))
		if uint64(addr) >= start && end <= start+uint64(len(b)) {
			return &b[uint64(addr)-start], true
		}
	}
	return nil, false
}

// releaseHostBuffers drops the pins of every buffer handed to the host so far.
// (The SDK's go.mod says go 1.19, so this package cannot use clear.)
func releaseHostBuffers() {
	for i := range hostBuffers {
		hostBuffers[i] = nil
	}
	hostBuffers = hostBuffers[:0]
}

// returnedBuffer finishes a host call that returns a buffer: on success it
// stores the data pointer and size into the SDK's out-parameters.
func returnedBuffer(st uint32, addr, size uint32, retData **byte, retSize *int) Status {
	data, ok := takeHostBuffer(addr, size)
	if Status(st) != StatusOK {
		return Status(st)
	}
	if !ok {
		return StatusInternalFailure
	}
	*retData = data
	*retSize = int(size)
	return StatusOK
}
