//go:build wasip1 && abiglue

package internal

import "unsafe"

// Buffers the host fills through proxy_on_memory_allocate come from an arena
// that is rewound when the next outermost guest callback starts, instead of
// one garbage-collected allocation each (and the zeroing of every body
// chunk): a request allocates nothing on the heap for host data.
//
// The contract that buys: data a host call returned (a header value, a body
// chunk, a shared-data value, a property) is valid until the callback that
// made the call returns. A value kept for a later callback must be copied
// (strings.Clone, append to an owned slice) before it returns.
//
// Memory safety does not depend on that contract: arena blocks are ordinary
// Go byte slices, referenced from the arena for as long as the host may hold
// a bare 32-bit address into them (until the next rewind), and by any Go
// value that still points into them afterwards. Breaking the contract reads
// newer host data, never freed memory.
//
// The guest is single-threaded: one callback (and, inside it, the host's
// re-entrant proxy_on_memory_allocate calls) runs at a time.

// Arena block sizes. A block that a callback outgrows is replaced by one
// twice as large at the next rewind, up to arenaMaxBlock; a request larger
// than that gets a block of its own, released at the next rewind.
const (
	arenaMinBlock = 4 << 10
	arenaMaxBlock = 256 << 10
)

type hostArena struct {
	cur   []byte   // the current block; cur[:off] is handed out
	off   int      // bytes of cur handed out since the last rewind
	used  int      // bytes handed out since the last rewind, all blocks
	old   [][]byte // blocks outgrown or oversized since the last rewind
	spare []byte   // a block reserve made for one oversized request, not handed out yet
}

// arena's first block exists from the start (package initialization runs
// in _initialize, outside any host call): host data of up to arenaMinBlock
// bytes (properties, shared-data values, small header values) is served
// without allocating, on a fresh VM too.
var arena = hostArena{cur: make([]byte, arenaMinBlock)}

// callbackDepth counts the exported callbacks on the stack: only the
// outermost one may rewind the arena, since an inner one (a host that calls
// back into the guest from inside a host call) runs while its caller still
// holds host data.
var callbackDepth int32

// enter starts an exported callback; every //go:wasmexport wrapper except
// proxy_on_memory_allocate calls it first, and leave last. The outermost
// one rewinds the arena when the last callback used it.
func enter() {
	if callbackDepth == 0 && (arena.used != 0 || arena.spare != nil) {
		arena.rewind()
	}
	callbackDepth++
}

func leave() { callbackDepth-- }

// alloc returns n bytes (at least one) of arena memory, 8-byte aligned.
func (a *hostArena) alloc(n uint32) *byte {
	size := (int(n) + 7) &^ 7
	if size == 0 {
		size = 8 // a zero-size request still gets a distinct address
	}
	a.used += size
	if a.off+size <= len(a.cur) {
		p := &a.cur[a.off]
		a.off += size
		return p
	}
	return a.grow(size)
}

func (a *hostArena) grow(size int) *byte {
	if len(a.spare) >= size {
		b := a.spare
		a.spare = nil
		a.old = append(a.old, b) // reserve left room: no allocation
		return &b[0]
	}
	if size > arenaMaxBlock/2 {
		b := make([]byte, size)
		a.old = append(a.old, b)
		return &b[0]
	}
	if a.cur != nil {
		a.old = append(a.old, a.cur)
	}
	a.cur = make([]byte, blockFor(2*len(a.cur), size))
	a.off = size
	return &a.cur[0]
}

// blockFor is the size of the block that replaces one of n bytes which
// could not hold need bytes: n doubled until it holds them, within
// [arenaMinBlock, arenaMaxBlock]. (The SDK's go.mod says go 1.19: no min
// and max here.)
func blockFor(n, need int) int {
	if n < arenaMinBlock {
		n = arenaMinBlock
	}
	for n < need && n < arenaMaxBlock {
		n *= 2
	}
	if n > arenaMaxBlock {
		n = arenaMaxBlock
	}
	return n
}

// reserveSlack is what reserve adds to a body for the other host data of the
// same callback (shared-data values, header values, properties).
const reserveSlack = 4 << 10

// reserve makes sure that the next request of up to n bytes, and further
// ones of up to reserveSlack bytes together, are served without allocating.
// The body callbacks call it with body_size before the plugin asks for the
// body: the host's proxy_get_buffer_bytes then copies the chunk into memory
// the guest allocated in its own frame, and proxy_on_memory_allocate never
// grows linear memory for a body. (Envoy's WAMR runtime up to 2.2 traps the
// plugin when memory grows inside proxy_on_memory_allocate during
// proxy_get_buffer_bytes: its interpreter keeps the old memory size in the
// outer frame; fixed in WAMR 2.3.0, #3872. One ~48 KB chunk on a fresh VM was
// enough.)
func (a *hostArena) reserve(n uint32) {
	if n == 0 {
		return
	}
	size := (int(n) + 7) &^ 7
	if cap(a.old)-len(a.old) < 2 {
		// grow appends to old: room for it now, not inside the allocator.
		a.old = append(make([][]byte, 0, 2*cap(a.old)+4), a.old...)
	}
	if a.off+size+reserveSlack <= len(a.cur) {
		return
	}
	if size > arenaMaxBlock/2 {
		if len(a.spare) < size {
			a.spare = make([]byte, size)
		}
		if a.off+reserveSlack <= len(a.cur) {
			return
		}
		size = 0 // the current block needs room for the slack only
	}
	if a.off > 0 {
		a.old = append(a.old, a.cur) // what it handed out stays reachable
	}
	a.cur = make([]byte, blockFor(2*len(a.cur), size+reserveSlack))
	a.off = 0
}

// fits reports whether a request of n bytes would be served without
// allocating: from the current block, or from a reserve made for it.
func (a *hostArena) fits(n uint32) bool {
	size := (int(n) + 7) &^ 7
	if size == 0 {
		size = 8 // as alloc serves it
	}
	return a.off+size <= len(a.cur) || len(a.spare) >= size && cap(a.old) > len(a.old)
}

// Header maps: the host copies a header value or the whole serialized map
// (proxy_get_header_map_value, proxy_get_header_map_pairs) into memory it
// asks proxy_on_memory_allocate for, of a size the guest does not know in
// advance. If serving that request grows linear memory, Envoy's WAMR up to
// 2.2 traps the plugin afterwards (proxy-wasm-cpp-host: maps of ≥ ~47 KiB on
// a fresh VM, within Envoy's default 60 KiB header limit).
//
// So a header-map read is first tried as it is (startMapRead): while it runs,
// proxy_on_memory_allocate refuses, by returning 0, a request the arena
// could not serve without allocating. Hosts treat 0 as the allocator's
// failure and fail the call without writing anything (proxy-wasm-cpp-host's
// WasmBase::allocMemory and copyToPointerSize: InvalidMemoryAccess; Kong's
// ngx_wasm_module likewise). Only then does the glue ask the host for the
// map's size (proxy_get_header_map_size, ABI 0.2.1), reserve room for the
// largest answer that map can give, in its own frame, and read again: every
// allocation of that second read is served from the arena, whose grown block
// serves such maps in later callbacks too. An ordinary read is one host
// call; asking for the size before every read instead made an unguarded
// request one host call dearer (its figure: docs/performance.md).
//
// Envoy answers proxy_get_header_map_size with HeaderMap::byteSize(), the
// sum of key and value lengths, not the serialized size: the serialization
// adds 4 bytes plus 10 per entry (two size words, two NULs). The entry count
// is the one the host passed to the headers callback, or maxMapEntries.

// mapTypes is the number of header map types (ABI 0.2.1: request and
// response headers and trailers).
const mapTypes = 4

// maxMapEntries bounds the entries of a map whose count the callback was
// not given: the ABI's limit for a serialized map (Envoy deserializes at
// most 1,024 pairs; its max_headers_count defaults to 100).
const maxMapEntries = 1024

var (
	// mapEntries[t] is the entry count the host passed to the current
	// callback for map t (proxy_on_request_headers, ...; 0: not given): the
	// headers callbacks set it for their own map and clear it on return.
	mapEntries [mapTypes]uint32
	// outMapSize receives proxy_get_header_map_size's out-parameter.
	outMapSize uint32
	// refusing is set while a header map read is tried unreserved; refused
	// reports that proxy_on_memory_allocate refused a request of it.
	refusing, refused bool
)

// A host call that reads header map t is tried unreserved first, between
// startMapRead and mapReadRefused, and when the allocator refused what it
// asked for, tried again after reserveForMap. A map type without a size
// (gRPC metadata, call responses) is read as it is.

// startMapRead starts a read of header map t.
func startMapRead(t MapType) {
	refusing, refused = uint32(t) < mapTypes, false
	clearOut()
}

// mapReadRefused ends a read of header map t and reports whether the
// allocator refused it; room for the map is then reserved, for the read to
// be tried again.
func mapReadRefused(t MapType) bool {
	refusing = false
	if !refused {
		return false
	}
	refused = false
	reserveForMap(t)
	clearOut()
	return true
}

// reserveForMap makes sure the next read of header map t is served without
// allocating inside proxy_on_memory_allocate. A host that cannot say the
// map's size gets no reservation: the read is then served as any other.
func reserveForMap(t MapType) {
	outMapSize = 0
	if hostGetHeaderMapSize(uint32(t), &outMapSize) != 0 {
		return
	}
	n := mapEntries[t]
	if n == 0 {
		n = maxMapEntries
	}
	bound := uint64(outMapSize) + 4 + 10*uint64(n)
	if bound > 1<<31 {
		return // no host serializes that much; nothing sensible to reserve
	}
	arena.reserve(uint32(bound))
}

// wroteMap forgets the entry count of map t after the guest changed the map:
// reserveForMap then bounds it by maxMapEntries.
func wroteMap(t MapType) {
	if uint32(t) < mapTypes {
		mapEntries[t] = 0
	}
}

// rewind makes the whole current block available again and lets the
// blocks outgrown since the last rewind go (the collector frees them once
// no Go value points into them).
func (a *hostArena) rewind() {
	a.spare = nil // a reserve the callback did not use
	if len(a.old) > 0 {
		for i := range a.old {
			a.old[i] = nil
		}
		a.old = a.old[:0]
		if a.used > len(a.cur) && len(a.cur) < arenaMaxBlock {
			// This callback needed more: give the next one a block
			// that holds all of it.
			a.cur = make([]byte, blockFor(len(a.cur), a.used))
		}
	}
	a.off, a.used = 0, 0
}

// take turns the address and size a host call wrote into a Go pointer into
// the arena block that holds them. ok is false when the range does not lie
// inside memory handed out since the last rewind (a host violating the ABI);
// a zero size always yields (nil, true).
func (a *hostArena) take(addr, size uint32) (data *byte, ok bool) {
	if size == 0 {
		return nil, true
	}
	if p := within(a.cur[:a.off], addr, size); p != nil {
		return p, true
	}
	for _, b := range a.old {
		if p := within(b, addr, size); p != nil {
			return p, true
		}
	}
	return nil, false
}

// within returns a pointer to b's bytes at guest address addr when
// [addr, addr+size) lies inside b.
func within(b []byte, addr, size uint32) *byte {
	if len(b) == 0 {
		return nil
	}
	start := uint64(uintptr(unsafe.Pointer(&b[0])))
	if uint64(addr) < start || uint64(addr)+uint64(size) > start+uint64(len(b)) {
		return nil
	}
	return &b[uint64(addr)-start]
}

// abiOnMemoryAllocate is proxy_on_memory_allocate(size) -> ptr: the host asks
// for size bytes of guest memory to write a result into. It returns 0 (the
// ABI's failure) only during a header-map read tried unreserved (startMapRead),
// for a request the arena cannot serve without allocating; otherwise a
// zero-size request too gets a distinct address.
//
//go:wasmexport proxy_on_memory_allocate
func abiOnMemoryAllocate(size uint32) *byte {
	if refusing && !arena.fits(size) {
		refused = true
		return nil
	}
	return arena.alloc(size)
}
