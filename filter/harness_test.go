package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
	"github.com/tidwall/gjson"
)

// The plugin's tests run twice through one harness: natively in the SDK's
// proxytest emulator (fast, can reach into Go internals) and against the
// built build/mcp-resume-guard.wasm in internal/wasmhost (proves the
// artifact Envoy loads behaves as the tests say). A test written as
//
//	func TestX(t *testing.T) {
//		forEachDriver(t, func(t *testing.T, h *harness) {
//			h.start(testConfig)
//			s, act := h.request("GET", "/mcp", [2]string{"mcp-session-id", "s-1"})
//			...
//		})
//	}
//
// runs as TestX/native and TestX/wasm.

// driverKind names an environment the plugin runs in.
type driverKind string

const (
	native driverKind = "native" // proxytest, the plugin's Go code in this process
	wasm   driverKind = "wasm"   // internal/wasmhost, the built .wasm under wazero
)

// drivers lists every environment forEachDriver runs a test in.
var drivers = []driverKind{native, wasm}

// driver is one started plugin in one environment.
type driver interface {
	// open starts a stream with the given request headers and runs the
	// request-headers callback.
	open(hs [][2]string, endOfStream bool) (stream, types.Action)
	// counter returns a plugin counter by its full name and whether the
	// plugin defined it.
	counter(name string) (uint64, bool)
	// logs returns the plugin's log lines at exactly level.
	logs(level logLevel) []string
	// failSharedData makes every later shared-data call of op fail the way a
	// host fails it (op is "get" or "set").
	failSharedData(op string)
}

// stream is one HTTP stream through the plugin.
type stream interface {
	// requestHeaders returns the request headers as the plugin left them.
	requestHeaders() [][2]string
	// localReply returns the reply the plugin sent, or nil.
	localReply() *localReply
	// runLocalReply passes the local reply through the plugin's response
	// callbacks, as Envoy's encoder chain does, and returns what the client
	// receives.
	runLocalReply() (hs [][2]string, body []byte)
	onResponseHeaders(hs [][2]string, endOfStream bool) types.Action
	// responseHeaders returns the response headers as the plugin left them.
	responseHeaders() [][2]string
	// onResponseBody runs the response-body callback and returns the bytes
	// that go downstream.
	onResponseBody(chunk []byte, endOfStream bool) []byte
	// end finishes the stream; cut ends it the way a client that went away
	// does (Envoy's DC flag), otherwise it completes.
	end(cut bool)
	// endWithFlags finishes the stream with exactly these response.flags.
	endWithFlags(flags uint64)
	// onResponseTrailers ends the response with trailers.
	onResponseTrailers(hs [][2]string) types.Action
	// vm is the index of the VM the stream ran on (always 0 natively).
	vm() int
}

// localReply is a reply the plugin sent with proxy_send_local_response.
type localReply struct {
	status  int
	headers [][2]string
	body    []byte
}

// logLevel is a proxy-wasm log level the tests read.
type logLevel int

const (
	logWarn logLevel = iota
	logError
	logCritical
	logInfo
	logDebug
)

// harness drives the plugin through one driver.
type harness struct {
	t       *testing.T
	kind    driverKind
	vms     int
	panicAt string
	// hostLogLevel is the wasm host's log level ("": its default, info,
	// Envoy's default).
	hostLogLevel string
	d            driver
}

// forEachDriver runs fn once per driver, each as a subtest named after it,
// with a harness that is not started yet.
func forEachDriver(t *testing.T, fn func(t *testing.T, h *harness)) {
	t.Helper()
	for _, k := range drivers {
		t.Run(string(k), func(t *testing.T) { fn(t, &harness{t: t, kind: k, vms: 1}) })
	}
}

// onlyDriver runs fn with one driver only, for a test that cannot be
// written for the other (the test says why).
func onlyDriver(t *testing.T, k driverKind, fn func(t *testing.T, h *harness)) {
	t.Helper()
	t.Run(string(k), func(t *testing.T) { fn(t, &harness{t: t, kind: k, vms: 1}) })
}

// withVMs makes the wasm driver run n VMs, Envoy's worker threads: streams
// are assigned to them round-robin, so consecutive streams of a test run on
// different VMs and meet only in shared data. The native driver has one.
func (h *harness) withVMs(n int) *harness {
	h.vms = n
	return h
}

// withPanicAt makes the wasm driver run the fault-point build of the plugin
// (-tags faults), which panics at the named fault point (faults_on.go).
func (h *harness) withPanicAt(at string) *harness {
	h.panicAt = at
	return h
}

// withHostLogLevel makes the wasm driver's host report and keep log lines
// from level on ("debug", "info", ...), as Envoy's --component-log-level
// wasm:LEVEL does. The native driver keeps every line.
func (h *harness) withHostLogLevel(level string) *harness {
	h.hostLogLevel = level
	return h
}

// start starts the plugin with the JSON configuration cfg and fails the test
// if it does not start.
func (h *harness) start(cfg string) *harness {
	h.t.Helper()
	if err := h.tryStart(cfg); err != nil {
		h.t.Fatalf("%s: plugin start: %v", h.kind, err)
	}
	return h
}

// tryStart starts the plugin; the error includes the critical log.
func (h *harness) tryStart(cfg string) error {
	h.t.Helper()
	if h.d != nil {
		h.t.Fatal("harness started twice")
	}
	var (
		d   driver
		err error
	)
	switch h.kind {
	case native:
		d, err = startNative(h.t, cfg)
	case wasm:
		d, err = startWasm(h.t, cfg, h.vms, h.panicAt, h.hostLogLevel)
	default:
		h.t.Fatalf("unknown driver %q", h.kind)
	}
	h.d = d
	return err
}

// counter returns the plugin counter name (without MetricPrefix).
func (h *harness) counter(name string) uint64 {
	h.t.Helper()
	v, ok := h.d.counter(MetricPrefix + name)
	if !ok {
		h.t.Fatalf("counter %s is not defined", name)
	}
	return v
}

// warnLogs returns the plugin's warn lines joined by newlines.
func (h *harness) warnLogs() string {
	return strings.Join(h.d.logs(logWarn), "\n")
}

// request starts a stream with the given request headers; a GET has no body.
func (h *harness) request(method, path string, hdr ...[2]string) (stream, types.Action) {
	headers := append([][2]string{{":method", method}, {":path", path}, {":authority", "mcp.example"}}, hdr...)
	return h.d.open(headers, method == "GET")
}

func header(hs [][2]string, key string) (string, bool) {
	for _, kv := range hs {
		if strings.EqualFold(kv[0], key) {
			return kv[1], true
		}
	}
	return "", false
}

// sseResponse sends an SSE response through the stream in the given chunks
// and returns what goes downstream.
func (h *harness) sseResponse(s stream, chunks ...string) string {
	s.onResponseHeaders([][2]string{{":status", "200"}, {"content-type", "text/event-stream"}, {"content-length", "999"}}, false)
	var out strings.Builder
	for i, c := range chunks {
		out.Write(s.onResponseBody([]byte(c), i == len(chunks)-1))
	}
	return out.String()
}

// reinitReason returns the reason of the forced re-initialization the
// stream was answered with, or "" when it was not; it fails the test when
// the reply is not the documented 404 JSON-RPC error.
func (h *harness) reinitReason(s stream) string {
	h.t.Helper()
	lr := s.localReply()
	if lr == nil {
		return ""
	}
	if lr.status != 404 {
		h.t.Fatalf("re-initialization status %d, want 404", lr.status)
	}
	if ct, _ := header(lr.headers, "content-type"); ct != "application/json" {
		h.t.Fatalf("re-initialization content-type %q", ct)
	}
	body := string(lr.body)
	if !gjson.Valid(body) || gjson.Get(body, "id").Type != gjson.Null || gjson.Get(body, "error.code").Int() != -32001 {
		h.t.Fatalf("re-initialization body %s", body)
	}
	return gjson.Get(body, "error.data.reason").String()
}

// localReplyHeaders builds the response Envoy sends for a local reply
// (envoy source/common/http/utility.cc sendLocalReply): :status, the
// plugin's headers, then content-length and content-type text/plain when
// the body is not empty and the plugin gave none.
func localReplyHeaders(lr *localReply) [][2]string {
	hs := [][2]string{{":status", strconv.Itoa(lr.status)}}
	hs = append(hs, lr.headers...)
	if len(lr.body) > 0 {
		hs = append(hs, [2]string{"content-length", strconv.Itoa(len(lr.body))})
		if _, ok := header(hs, "content-type"); !ok {
			hs = append(hs, [2]string{"content-type", "text/plain"})
		}
	}
	return hs
}
