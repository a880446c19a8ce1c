package main

import (
	"math/rand/v2"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasiclock"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// vmContext is the VM-wide context: one per Envoy worker thread.
type vmContext struct {
	types.DefaultVMContext
}

// NewPluginContext implements types.VMContext.
func (*vmContext) NewPluginContext(uint32) types.PluginContext {
	return &pluginContext{}
}

// pluginContext holds everything shared by the HTTP streams of one VM: the
// configuration, the counters, the watermark store and reusable buffers.
// Callbacks of one VM never run concurrently, so plain fields are safe.
type pluginContext struct {
	types.DefaultPluginContext
	cfg config.Config
	// matchByName and matchByPath say what matchRoute must read: whether
	// any route entry names a route, whether any matches a path prefix.
	matchByName, matchByPath bool

	metrics metrics
	store   cursor.Store
	guard   cursor.Guard // the rules, over store
	started bool

	scratch   []byte               // rewritten body chunks
	held      []byte               // a copy of the rewriter's held-back bytes during a body callback
	logBuf    []byte               // decision log lines (logDecision)
	nonces    streamNonces         // the streams' nonces in records
	rewriters []*sse.Rewriter      // free list, reused across streams
	tails     []*cursor.StreamTail // free list of stream tails (their ID buffers), reused across streams
	contexts  []*httpContext       // free list of stream contexts whose stream ended
	reinitAt  [8][]byte            // prebuilt re-initialization bodies by reason
	now       func() uint32        // unix seconds; replaced in tests
}

// OnPluginStart implements types.PluginContext: it parses the configuration
// and refuses to start on any error, naming the key at fault.
func (p *pluginContext) OnPluginStart(int) (status types.OnPluginStartStatus) {
	defer func() {
		if r := recover(); r != nil {
			proxywasm.LogCritical("mcp-resume-guard: plugin start failed: internal error")
			status = types.OnPluginStartStatusFailed
		}
	}()
	data, err := proxywasm.GetPluginConfiguration()
	if err != nil && err != types.ErrorStatusNotFound {
		proxywasm.LogCritical("mcp-resume-guard: cannot read the plugin configuration: " + err.Error())
		return types.OnPluginStartStatusFailed
	}
	cfg, err := config.Parse(data)
	if err != nil {
		proxywasm.LogCritical("mcp-resume-guard: " + err.Error())
		return types.OnPluginStartStatusFailed
	}
	if len(cfg.Routes) == 0 {
		proxywasm.LogWarn(`mcp-resume-guard: no "routes" configured; every request passes untouched`)
	}
	p.cfg = cfg
	p.matchByName, p.matchByPath = cfg.NeedsRouteName(), needsPath(&cfg)
	p.metrics.define()
	p.nonces.seed()
	p.store = cursor.Store{Data: &hostSharedData{}, Slots: uint32(cfg.MaxSessions), TTL: uint32(cfg.SessionTTLSeconds)}
	for _, r := range []cursor.Reason{cursor.ReasonUnknown, cursor.ReasonUntagged, cursor.ReasonCrossTransport, cursor.ReasonDrainRace, cursor.ReasonTombstoned} {
		p.reinitAt[r] = cursor.ReinitBody(r)
	}
	if p.now == nil {
		p.now = wasiclock.Unix
	}
	p.guard = cursor.Guard{
		Policy: cfg.Policy, Store: &p.store, Clock: func() uint32 { return p.now() },
		LegacyDropCursor: cfg.LegacyReinit == config.LegacyDropCursor, Unwind: cfg.Unwind,
	}
	p.started = true
	proxywasm.LogInfo(startMessage(cfg.Routes))
	return types.OnPluginStartStatusOK
}

// NewHttpContext implements types.PluginContext. Stream contexts are reused
// (release), so that a request, guarded or not, allocates nothing on the
// heap: every request reaches the plugin, and a GC cycle inside the VM
// stops the Envoy worker (docs/performance.md).
func (p *pluginContext) NewHttpContext(uint32) types.HttpContext {
	if n := len(p.contexts); n > 0 {
		h := p.contexts[n-1]
		p.contexts = p.contexts[:n-1]
		return h
	}
	return &httpContext{plugin: p}
}

// maxFreeContexts bounds the free list of stream contexts.
const maxFreeContexts = 256

// release takes back the context of a stream that ended. It runs at the end
// of OnHttpStreamDone, in proxy_on_log: Envoy calls it once per stream, after
// every other HTTP callback of the stream, and the SDK only drops its
// reference on proxy_on_delete without calling the context again. A
// context whose stream is destroyed without a log callback, or whose
// OnHttpStreamDone panicked, is left to the GC.
func (p *pluginContext) release(h *httpContext) {
	if h.tail != nil {
		// A resume's tail whose response was not rewritten.
		p.putTail(h.tail)
	}
	*h = httpContext{plugin: p}
	if len(p.contexts) < maxFreeContexts {
		p.contexts = append(p.contexts, h)
	}
}

// getRewriter returns a rewriter for a new stream.
func (p *pluginContext) getRewriter(t cursor.Transport) *sse.Rewriter {
	if n := len(p.rewriters); n > 0 {
		rw := p.rewriters[n-1]
		p.rewriters = p.rewriters[:n-1]
		rw.Reset(t, p.cfg.MaxLineBytes)
		return rw
	}
	rw := sse.NewRewriter(t, p.cfg.MaxLineBytes)
	rw.SetMint(p.cfg.Policy.Minting) // kept across Reset, like the configuration
	return rw
}

func (p *pluginContext) putRewriter(rw *sse.Rewriter) {
	// Reset drops the last call's events, which may still point into the
	// stream's last host buffer.
	rw.Reset(cursor.TransportNone, p.cfg.MaxLineBytes)
	if len(p.rewriters) < 64 {
		p.rewriters = append(p.rewriters, rw)
	}
}

// getTail returns a stream tail whose ID buffers earlier streams grew; the
// caller resets it.
func (p *pluginContext) getTail() *cursor.StreamTail {
	if n := len(p.tails); n > 0 {
		t := p.tails[n-1]
		p.tails = p.tails[:n-1]
		return t
	}
	return new(cursor.StreamTail)
}

func (p *pluginContext) putTail(t *cursor.StreamTail) {
	if len(p.tails) < 64 {
		p.tails = append(p.tails, t)
	}
}

// failedWrite takes the result of a shared-data write: it counts the CAS
// conflicts the write retried and, when it failed, fails open: the stream
// goes on, the fault is counted (fail_open_total) and logged.
func (p *pluginContext) failedWrite(err error, what string) {
	p.metrics.casConflicts.add(p.store.TakeConflicts())
	if err != nil {
		p.metrics.failOpen.inc()
		proxywasm.LogWarn("mcp-resume-guard: " + what + ": " + err.Error())
	}
}

// streamNonces hands out the nonces naming response streams in watermark
// records. Streams of every VM (workers, replicas) write the same records,
// so each VM's sequence starts at a random point; from there it steps by an
// odd constant (a Weyl sequence), which visits all 2^32 values before it
// repeats (0 skipped). No two streams of one VM share a nonce until 2^32-1
// streams have passed, and two VMs that served n streams each share one
// with a chance of about 2n/2^32 (n independent draws each: n²/2^32). A step
// is one add; a draw from math/rand/v2 would run its ChaCha8 generator for
// every stream.
type streamNonces struct{ last uint32 }

// nonceStep is the sequence's step: odd, so the sequence has period 2^32
// (2^32 divided by the golden ratio, which spreads consecutive nonces).
const nonceStep = 0x9e3779b9

// seed starts the sequence at a random point.
func (n *streamNonces) seed() { n.last = rand.Uint32() }

// next returns the next nonce, never 0 (the zero tail's stream).
func (n *streamNonces) next() uint32 {
	if n.last += nonceStep; n.last == 0 {
		n.last += nonceStep
	}
	return n.last
}
