package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/proxytest"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// nativeDriver runs the plugin's Go code in the SDK's proxytest emulator.
// The emulator is process-wide: native tests never run in parallel.
type nativeDriver struct {
	t      *testing.T
	host   proxytest.HostEmulator
	plugin *pluginContext
}

// capturingVM is the plugin's VM context that remembers its plugin context,
// so native-only tests can reach into it.
type capturingVM struct {
	vmContext
	plugin *pluginContext
}

func (v *capturingVM) NewPluginContext(id uint32) types.PluginContext {
	v.plugin = v.vmContext.NewPluginContext(id).(*pluginContext)
	return v.plugin
}

func startNative(t *testing.T, cfg string) (driver, error) {
	vm := &capturingVM{}
	opt := proxytest.NewEmulatorOption().WithVMContext(vm).WithPluginConfiguration([]byte(cfg))
	host, reset := proxytest.NewHostEmulator(opt)
	t.Cleanup(reset)
	st := host.StartPlugin()
	d := &nativeDriver{t: t, host: host, plugin: vm.plugin} // the plugin context exists once started
	if st != types.OnPluginStartStatusOK {
		return d, fmt.Errorf("start status %v; critical log: %s", st, strings.Join(host.GetCriticalLogs(), "\n"))
	}
	return d, nil
}

// nativePlugin returns the plugin context of a native harness, for tests
// that replace Go internals.
func (h *harness) nativePlugin() *pluginContext {
	h.t.Helper()
	d, ok := h.d.(*nativeDriver)
	if !ok {
		h.t.Fatalf("%s driver has no Go plugin context", h.kind)
	}
	return d.plugin
}

func (d *nativeDriver) open(hs [][2]string, eos bool) (stream, types.Action) {
	id := d.host.InitializeHttpContext()
	return &nativeStream{d: d, id: id}, d.host.CallOnRequestHeaders(id, hs, eos)
}

func (d *nativeDriver) counter(name string) (uint64, bool) {
	v, err := d.host.GetCounterMetric(name)
	return v, err == nil
}

func (d *nativeDriver) logs(level logLevel) []string {
	switch level {
	case logWarn:
		return d.host.GetWarnLogs()
	case logError:
		return d.host.GetErrorLogs()
	case logCritical:
		return d.host.GetCriticalLogs()
	case logInfo:
		return d.host.GetInfoLogs()
	case logDebug:
		return d.host.GetDebugLogs()
	}
	return nil
}

// failSharedData replaces the plugin's shared-data binding: proxytest
// cannot fail a shared-data call.
func (d *nativeDriver) failSharedData(op string) {
	d.plugin.store.Data = failingSharedData{SharedData: d.plugin.store.Data, op: op}
}

// failingSharedData fails one operation with the error the SDK returns for
// INTERNAL_FAILURE.
type failingSharedData struct {
	cursor.SharedData
	op string
}

func (f failingSharedData) Get(key []byte) ([]byte, uint32, error) {
	if f.op == "get" {
		return nil, 0, types.ErrorInternalFailure
	}
	return f.SharedData.Get(key)
}

func (f failingSharedData) Set(key, value []byte, cas uint32) error {
	if f.op == "set" {
		return types.ErrorInternalFailure
	}
	return f.SharedData.Set(key, value, cas)
}

type nativeStream struct {
	d  *nativeDriver
	id uint32
}

func (s *nativeStream) requestHeaders() [][2]string {
	return s.d.host.GetCurrentRequestHeaders(s.id)
}

func (s *nativeStream) localReply() *localReply {
	lr := s.d.host.GetSentLocalResponse(s.id)
	if lr == nil {
		return nil
	}
	return &localReply{status: int(lr.StatusCode), headers: lr.Headers, body: lr.Data}
}

// runLocalReply does by hand what Envoy does with a local reply: it runs
// through the filter's own response callbacks.
func (s *nativeStream) runLocalReply() ([][2]string, []byte) {
	lr := s.localReply()
	if lr == nil {
		s.d.t.Fatal("no local reply to run")
	}
	s.d.host.CallOnResponseHeaders(s.id, localReplyHeaders(lr), len(lr.body) == 0)
	body := lr.body
	if len(body) > 0 {
		s.d.host.CallOnResponseBody(s.id, body, true)
		body = bytes.Clone(s.d.host.GetCurrentResponseBody(s.id)) // see onResponseBody
	}
	return s.d.host.GetCurrentResponseHeaders(s.id), body
}

func (s *nativeStream) onResponseHeaders(hs [][2]string, eos bool) types.Action {
	return s.d.host.CallOnResponseHeaders(s.id, hs, eos)
}

func (s *nativeStream) responseHeaders() [][2]string {
	return s.d.host.GetCurrentResponseHeaders(s.id)
}

// onResponseBody returns a copy of what goes downstream: proxytest keeps the
// very slice the plugin passed to ReplaceHttpResponseBody, and the plugin
// reuses that scratch buffer for its next chunk, so the emulator's slice
// would show the next chunk's bytes once a later callback ran.
func (s *nativeStream) onResponseBody(chunk []byte, eos bool) []byte {
	s.d.host.CallOnResponseBody(s.id, chunk, eos)
	return bytes.Clone(s.d.host.GetCurrentResponseBody(s.id))
}

// end sets response.flags as Envoy does before the log phase (DC for a
// client that went away) and completes the stream.
func (s *nativeStream) end(cut bool) {
	var flags uint64
	if cut {
		flags = flagDownstreamConnectionTermination
	}
	s.endWithFlags(flags)
}

func (s *nativeStream) endWithFlags(flags uint64) {
	var b [8]byte // all zero for no flag: proxytest refuses an empty property value
	binary.LittleEndian.PutUint64(b[:], flags)
	if err := s.d.host.SetProperty(propFlags, b[:]); err != nil {
		s.d.t.Fatal(err)
	}
	s.d.host.CompleteHttpContext(s.id)
}

func (s *nativeStream) onResponseTrailers(hs [][2]string) types.Action {
	return s.d.host.CallOnResponseTrailers(s.id, hs)
}

func (s *nativeStream) vm() int { return 0 }
