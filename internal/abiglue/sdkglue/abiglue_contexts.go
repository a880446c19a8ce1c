//go:build wasip1 && abiglue

package internal

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"

// The VM's HTTP contexts, by context ID, and the dispatch of their callbacks.
//
// The SDK keeps every context in Go maps (vmstate.go) and looks the context
// up in each callback: an HTTP stream costs it nine lookups, two inserts and
// two deletes, and in a Wasm build every one is a chain of runtime calls
// (hashing, probing the table, clearing the slot): a third of what a request
// the plugin lets pass costs (docs/performance.md, "The tricks that stay").
// The glue keeps HTTP contexts in httpStreams instead, an
// open-addressed table whose lookup is a multiply and a compare, and calls
// their callbacks itself; plugin (root) and TCP contexts stay with the SDK,
// whose callbacks handle every ID this table does not hold.
//
// The SDK's contextIDToRootID names the plugin context of each context, for
// HTTP callouts only (RegisterHttpCallout, proxyOnHttpCallResponse): an HTTP
// context is entered there when it dispatches its first call (httpCallMade)
// and removed when it is deleted, so a callout keeps the SDK's behaviour —
// including the callback that is not run for a context deleted meanwhile.
// (One difference, which Envoy never shows since its context IDs only
// grow: the SDK enters every HTTP context there when it is created, so an
// answer to a deleted stream's callout would run on a new stream given the
// same ID; here it runs only if that new stream made a callout too.) The
// SDK's optional callback timing (the proxywasm_timing build tag) does not
// cover the HTTP callbacks the glue dispatches.

// httpStreams holds the VM's HTTP contexts.
var httpStreams httpTable

// httpSlot is one HTTP context of the table.
type httpSlot struct {
	ctx    types.HttpContext // nil: the slot is free
	id     uint32
	root   uint32 // the plugin context whose NewHttpContext made it
	mapped bool   // entered in the SDK's contextIDToRootID (httpCallMade)
}

// httpTable is an open-addressed hash table of HTTP contexts by ID: linear
// probing from a Fibonacci hash of the ID, at most half full, so a lookup
// ends at the ID's slot or at a free one within a few steps; a removal
// shifts the entries after it back (no tombstones). It grows as streams
// open and shrinks as they close, so its memory follows the number of
// streams open at once.
type httpTable struct {
	slots []httpSlot // len is 0 or a power of two ≥ minHTTPSlots
	n     int        // slots in use
	shift uint8      // 32 − log2(len(slots)): the hash's top bits index the table
}

// minHTTPSlots is the table's smallest size. (The SDK's module is Go 1.19:
// no min or max built-ins here.)
const minHTTPSlots = 16

// home is the slot where the probe for id starts.
func (t *httpTable) home(id uint32) int { return int((id * 0x9E3779B9) >> t.shift) }

// find returns the slot of id, or -1 when the table does not hold it.
func (t *httpTable) find(id uint32) int {
	if t.n == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.home(id); ; i = (i + 1) & mask {
		switch s := &t.slots[i]; {
		case s.ctx == nil:
			return -1
		case s.id == id:
			return i
		}
	}
}

// put adds the context ctx (not nil) under id, which the table does not
// hold, made by the plugin context root.
func (t *httpTable) put(id, root uint32, ctx types.HttpContext) {
	switch {
	case len(t.slots) == 0:
		t.resize(minHTTPSlots)
	case 2*(t.n+1) > len(t.slots):
		t.resize(2 * len(t.slots))
	}
	t.insert(httpSlot{ctx: ctx, id: id, root: root})
}

// insert puts s into the first free slot of its probe; the table has one.
func (t *httpTable) insert(s httpSlot) {
	mask := len(t.slots) - 1
	i := t.home(s.id)
	for t.slots[i].ctx != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = s
	t.n++
}

// remove frees slot i (in use), moving back each entry after it whose probe
// passed through it, so that every lookup still finds what it holds.
func (t *httpTable) remove(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].ctx != nil; j = (j + 1) & mask {
		// The entry at j may fill i when i lies on its probe: between its
		// home slot and j, going round the table.
		if (j-t.home(t.slots[j].id))&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = httpSlot{}
	t.n--
	if len(t.slots) > minHTTPSlots && 8*t.n < len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
}

// resize moves every entry into a table of size slots (a power of two).
func (t *httpTable) resize(size int) {
	old := t.slots
	t.slots = make([]httpSlot, size)
	t.shift = 32
	for s := size; s > 1; s >>= 1 {
		t.shift--
	}
	t.n = 0
	for i := range old {
		if old[i].ctx != nil {
			t.insert(old[i])
		}
	}
}

// httpContextOf makes contextID the active context and returns its HTTP
// context; an ID that names none panics as the SDK's callbacks do (the
// panic aborts the VM: the host called a callback on a context it never
// created or already deleted).
func httpContextOf(contextID uint32, callback string) types.HttpContext {
	i := httpStreams.find(contextID)
	if i < 0 {
		panic("invalid context id on " + callback)
	}
	currentState.setActiveContextID(contextID)
	return httpStreams.slots[i].ctx
}

// contextCreate is proxy_on_context_create: a context under a plugin
// context becomes an HTTP context when the plugin makes one for it (this
// table), else a TCP context (the SDK's); a plugin context is the SDK's.
func contextCreate(contextID, parentID uint32) {
	if parentID == 0 {
		proxyOnContextCreate(contextID, parentID)
		lastRoot = currentState.pluginContexts[contextID]
		lastRootID = contextID
		return
	}
	root := lastRoot
	if parentID != lastRootID || root == nil {
		var ok bool
		if root, ok = currentState.pluginContexts[parentID]; !ok {
			panic("invalid plugin context id")
		}
	}
	if httpStreams.find(contextID) >= 0 {
		panic("context id duplicated")
	}
	if ctx := root.context.NewHttpContext(contextID); ctx != nil {
		httpStreams.put(contextID, parentID, ctx)
		return
	}
	if !currentState.createTcpContext(contextID, parentID) {
		panic("invalid context id on proxy_on_context_create")
	}
}

// lastRoot is the plugin context created last, lastRootID its ID (nil once
// it is deleted): a VM runs one plugin, whose plugin context makes every
// stream, so a stream's creation finds it here without a map lookup.
var (
	lastRoot   *pluginContextState
	lastRootID uint32
)

// contextLog is proxy_on_log.
func contextLog(contextID uint32) {
	i := httpStreams.find(contextID)
	if i < 0 {
		proxyOnLog(contextID)
		return
	}
	currentState.setActiveContextID(contextID)
	httpStreams.slots[i].ctx.OnHttpStreamDone()
}

// contextDone is proxy_on_done: only a plugin context has anything to do.
func contextDone(contextID uint32) bool {
	if httpStreams.find(contextID) >= 0 {
		return true
	}
	return proxyOnDone(contextID)
}

// contextDelete is proxy_on_delete.
func contextDelete(contextID uint32) {
	i := httpStreams.find(contextID)
	if i < 0 {
		if contextID == lastRootID {
			lastRoot = nil
		}
		proxyOnDelete(contextID)
		return
	}
	if httpStreams.slots[i].mapped {
		delete(currentState.contextIDToRootID, contextID)
	}
	httpStreams.remove(i)
}

// httpCallMade enters the active context, when it is an HTTP context, in
// the SDK's contextIDToRootID, where RegisterHttpCallout looks up the
// plugin context that will receive the call's response.
func httpCallMade() {
	id := currentState.activeContextID
	if i := httpStreams.find(id); i >= 0 && !httpStreams.slots[i].mapped {
		currentState.contextIDToRootID[id] = httpStreams.slots[i].root
		httpStreams.slots[i].mapped = true
	}
}
