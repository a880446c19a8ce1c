package wasmhost

import (
	"sort"
	"sync"
)

// sharedData is the process-wide key-value store of ABI 0.2.1 with Envoy's
// compare-and-swap semantics (proxy-wasm-cpp-host src/shared_data.cc):
// cas 0 writes unconditionally, writing a missing key ignores cas, every
// write stores a new non-zero cas, a stale cas is CAS_MISMATCH. There is no
// delete and no expiry. All VMs of a Host share it (one vm_id).
type sharedData struct {
	mu      sync.Mutex
	entries map[string]*sharedEntry
	nextCAS uint32
	fault   func(op SharedDataOp, key string) bool
}

type sharedEntry struct {
	value []byte
	cas   uint32
}

// SharedDataOp names a shared-data host call for fault injection.
type SharedDataOp string

// Shared-data operations.
const (
	SharedGet SharedDataOp = "get"
	SharedSet SharedDataOp = "set"
)

func (d *sharedData) init() { d.entries = map[string]*sharedEntry{} }

// casLocked returns a fresh non-zero cas. d.mu is held.
func (d *sharedData) casLocked() uint32 {
	d.nextCAS++
	if d.nextCAS == 0 {
		d.nextCAS++
	}
	return d.nextCAS
}

// get appends the value of key to dst.
func (d *sharedData) get(key []byte, dst []byte) ([]byte, uint32, Status) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fault != nil && d.fault(SharedGet, string(key)) {
		return dst, 0, StatusInternalFailure
	}
	e, ok := d.entries[string(key)]
	if !ok {
		return dst, 0, StatusNotFound
	}
	return append(dst, e.value...), e.cas, StatusOK
}

func (d *sharedData) set(key, value []byte, cas uint32) Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fault != nil && d.fault(SharedSet, string(key)) {
		return StatusInternalFailure
	}
	e, ok := d.entries[string(key)]
	if !ok {
		d.entries[string(key)] = &sharedEntry{value: append([]byte(nil), value...), cas: d.casLocked()}
		return StatusOK
	}
	if cas != 0 && cas != e.cas {
		return StatusCASMismatch
	}
	e.value = append(e.value[:0], value...)
	e.cas = d.casLocked()
	return StatusOK
}

// SetSharedDataFault installs fn, consulted on every shared-data call: when
// it returns true the call fails with INTERNAL_FAILURE. nil removes it.
func (h *Host) SetSharedDataFault(fn func(op SharedDataOp, key string) bool) {
	h.shared.mu.Lock()
	h.shared.fault = fn
	h.shared.mu.Unlock()
}

// SharedData returns a copy of the shared-data store (key → value).
func (h *Host) SharedData() map[string][]byte {
	h.shared.mu.Lock()
	defer h.shared.mu.Unlock()
	out := make(map[string][]byte, len(h.shared.entries))
	for k, e := range h.shared.entries {
		out[k] = append([]byte(nil), e.value...)
	}
	return out
}

// SharedDataGet reads one key as the plugin would, with its cas.
func (h *Host) SharedDataGet(key string) ([]byte, uint32, bool) {
	v, cas, st := h.shared.get([]byte(key), nil)
	return v, cas, st == StatusOK
}

// SharedDataSet writes one key as the plugin would; it returns the status.
func (h *Host) SharedDataSet(key string, value []byte, cas uint32) Status {
	return h.shared.set([]byte(key), value, cas)
}

// SharedDataKeys returns the sorted keys.
func (h *Host) SharedDataKeys() []string {
	h.shared.mu.Lock()
	keys := make([]string, 0, len(h.shared.entries))
	for k := range h.shared.entries {
		keys = append(keys, k)
	}
	h.shared.mu.Unlock()
	sort.Strings(keys)
	return keys
}
