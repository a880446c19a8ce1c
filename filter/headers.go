package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// Every host call that returns data costs a round trip into the guest's
// allocator (proxy_on_memory_allocate); under a Wasm runtime that is worth
// more than the rest of a typical callback. So each header map is read once,
// as a whole, and the few headers the filter needs are picked out of it. The
// SDK's pairs alias the one buffer the host filled: no per-header copies.

// requestHeaders are the request headers the filter reads.
type requestHeaders struct {
	path, method, session, lastEventID string
}

// readRequestHeaders reads the request header map with one host call. Like
// the host's single-value lookup, each field takes the first value of its
// header; a map the host cannot return reads as empty.
func readRequestHeaders() (r requestHeaders) {
	pairs, _ := proxywasm.GetHttpRequestHeaders()
	var seen uint8
	for _, kv := range pairs {
		switch kv[0] {
		case ":path":
			pick(&r.path, kv[1], &seen, 1)
		case ":method":
			pick(&r.method, kv[1], &seen, 2)
		case "mcp-session-id":
			pick(&r.session, kv[1], &seen, 4)
		case "last-event-id":
			pick(&r.lastEventID, kv[1], &seen, 8)
		}
	}
	return r
}

// pick stores v in dst unless the header (bit in seen) was already found.
func pick(dst *string, v string, seen *uint8, bit uint8) {
	if *seen&bit == 0 {
		*dst, *seen = v, *seen|bit
	}
}
