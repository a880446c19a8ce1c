// Command probe is a proxy-wasm HTTP filter for the host's tests. The
// request header x-test (a comma-separated list) selects what it does; it
// reports what it saw in x-probe-* response headers and in a warn log line
// at the end of each stream.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

func init() { proxywasm.SetVMContext(&vmContext{}) }

func main() {}

type vmContext struct{ types.DefaultVMContext }

func (*vmContext) NewPluginContext(uint32) types.PluginContext { return &pluginContext{} }

type pluginContext struct {
	types.DefaultPluginContext
	requests, ticks, casMismatch proxywasm.MetricCounter
	active                       proxywasm.MetricGauge
}

func (p *pluginContext) OnPluginStart(size int) types.OnPluginStartStatus {
	p.requests = proxywasm.DefineCounterMetric("probe_requests")
	p.ticks = proxywasm.DefineCounterMetric("probe_ticks")
	p.casMismatch = proxywasm.DefineCounterMetric("probe_cas_mismatch")
	p.active = proxywasm.DefineGaugeMetric("probe_active")
	cfg, err := proxywasm.GetPluginConfiguration()
	if err != nil && size > 0 {
		proxywasm.LogErrorf("probe: read configuration: %v", err)
		return types.OnPluginStartStatusFailed
	}
	proxywasm.LogInfof("probe configured: %q", cfg)
	for _, kv := range strings.Split(string(cfg), ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "tick":
			ms, _ := strconv.Atoi(v)
			if err := proxywasm.SetTickPeriodMilliSeconds(uint32(ms)); err != nil {
				proxywasm.LogErrorf("probe: tick: %v", err)
			}
		case "fail":
			return types.OnPluginStartStatusFailed
		}
	}
	return types.OnPluginStartStatusOK
}

func (p *pluginContext) OnTick() { p.ticks.Increment(1) }

func (p *pluginContext) NewHttpContext(id uint32) types.HttpContext {
	p.active.Add(1)
	return &httpContext{plugin: p, id: id}
}

type httpContext struct {
	types.DefaultHttpContext
	plugin *pluginContext
	id     uint32
	tests  map[string]bool
	seen   [][2]string // reported as response headers
}

// note keeps a copy of v for the response: values read from the host are
// only valid until the callback returns (the ABI glue reuses their memory).
func (c *httpContext) note(k, v string) { c.seen = append(c.seen, [2]string{k, strings.Clone(v)}) }

// getCurrentTimeNanoseconds is the ABI's wall clock, which the SDK does not
// wrap.
//
//go:wasmimport env proxy_get_current_time_nanoseconds
func getCurrentTimeNanoseconds(ns *uint64) uint32

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func prop(path ...string) string {
	v, err := proxywasm.GetProperty(path)
	if err != nil {
		return "<" + errString(err) + ">"
	}
	return string(v)
}

func propInt(path ...string) string {
	v, err := proxywasm.GetProperty(path)
	if err != nil {
		return "<" + errString(err) + ">"
	}
	if len(v) != 8 {
		return fmt.Sprintf("<len %d>", len(v))
	}
	return strconv.FormatUint(binary.LittleEndian.Uint64(v), 10)
}

func (c *httpContext) OnHttpRequestHeaders(numHeaders int, endOfStream bool) types.Action {
	c.plugin.requests.Increment(1)
	c.tests = map[string]bool{}
	t, _ := proxywasm.GetHttpRequestHeader("x-test")
	t = strings.Clone(t) // kept for later callbacks (the glue reuses host data)
	for _, s := range strings.Split(t, ",") {
		c.tests[strings.TrimSpace(s)] = true
	}
	for _, k := range []string{":method", ":path", ":authority", ":scheme"} {
		v, err := proxywasm.GetHttpRequestHeader(k)
		if err != nil {
			v = "<" + errString(err) + ">"
		}
		c.note("x-probe-"+strings.TrimPrefix(k, ":"), v)
	}
	hs, _ := proxywasm.GetHttpRequestHeaders()
	c.note("x-probe-num-headers", fmt.Sprintf("%d/%d", numHeaders, len(hs)))
	c.note("x-probe-eos", strconv.FormatBool(endOfStream))
	c.note("x-probe-route", prop("xds", "route_name"))
	c.note("x-probe-old-route", prop("route_name"))
	c.note("x-probe-prop-path", prop("request", "path"))
	c.note("x-probe-prop-url-path", prop("request", "url_path"))
	c.note("x-probe-prop-method", prop("request", "method"))
	c.note("x-probe-root-id", prop("plugin_root_id"))
	c.note("x-probe-ctx", strconv.Itoa(int(c.id)))

	if c.tests["trap"] {
		panic("probe: trap requested")
	}
	if c.tests["hdr"] {
		_ = proxywasm.AddHttpRequestHeader("x-added", "yes")
		_ = proxywasm.RemoveHttpRequestHeader("x-remove")
		_ = proxywasm.ReplaceHttpRequestHeader("x-replace", "replaced")
		_ = proxywasm.ReplaceHttpRequestHeader("last-event-id", "rewritten")
	}
	if c.tests["setpairs"] {
		_ = proxywasm.ReplaceHttpRequestHeaders([][2]string{
			{":method", "GET"}, {":path", "/set"}, {":authority", "example"}, {":scheme", "http"}, {"X-Mixed", "v"},
		})
	}
	if c.tests["reqbody"] {
		_ = proxywasm.RemoveHttpRequestHeader("content-length")
	}
	if c.tests["cas"] {
		c.casIncrement(false)
	}
	if c.tests["cas-race"] {
		c.casIncrement(true)
	}
	if c.tests["shared-fail"] {
		err := proxywasm.SetSharedData("probe:x", []byte("v"), 0)
		_, _, gerr := proxywasm.GetSharedData("probe:x")
		c.note("x-shared-err", errString(err)+"/"+errString(gerr))
	}
	if c.tests["clock"] {
		// The two wall clocks a guest can read: WASI's (time.Now) and the
		// proxy-wasm ABI's own.
		var ns uint64
		st := getCurrentTimeNanoseconds(&ns)
		c.note("x-clock-wasi", strconv.FormatInt(time.Now().Unix(), 10))
		c.note("x-clock-proxy", strconv.FormatUint(ns/1e9, 10)+"/"+strconv.FormatUint(uint64(st), 10))
	}
	if c.tests["local"] || c.tests["local-twice"] {
		if err := proxywasm.SendHttpResponse(403, [][2]string{{"x-local", "1"}}, []byte("denied by probe"), -1); err != nil {
			proxywasm.LogErrorf("probe: local reply: %v", err)
		}
		return types.ActionPause
	}
	return types.ActionContinue
}

// casIncrement adds one to probe:cas with compare-and-swap, retrying on
// CAS_MISMATCH. With wait, the first attempt announces itself in
// probe:waiting and spins until probe:go exists before writing, so that a
// test can write from another VM in between.
func (c *httpContext) casIncrement(wait bool) {
	for i := 0; i < 100; i++ {
		v, cas, err := proxywasm.GetSharedData("probe:cas")
		if wait && i == 0 {
			_ = proxywasm.SetSharedData("probe:waiting", []byte("1"), 0)
			for j := 0; j < 50_000_000; j++ {
				if _, _, err := proxywasm.GetSharedData("probe:go"); err == nil {
					break
				}
			}
		}
		n := 0
		if err == nil {
			n, _ = strconv.Atoi(string(v))
		} else if !errors.Is(err, types.ErrorStatusNotFound) {
			c.note("x-cas", "get: "+err.Error())
			return
		}
		err = proxywasm.SetSharedData("probe:cas", []byte(strconv.Itoa(n+1)), cas)
		if err == nil {
			c.note("x-cas", strconv.Itoa(n+1))
			return
		}
		if errors.Is(err, types.ErrorStatusCasMismatch) {
			c.plugin.casMismatch.Increment(1)
			continue
		}
		c.note("x-cas", "set: "+err.Error())
		return
	}
}

func (c *httpContext) OnHttpRequestBody(bodySize int, endOfStream bool) types.Action {
	if c.tests["reqbody"] {
		body, _ := proxywasm.GetHttpRequestBody(0, bodySize)
		_ = proxywasm.ReplaceHttpRequestBody(append(append([]byte("<"), body...), '>'))
	}
	if c.tests["reqbuffer"] && !endOfStream {
		return types.ActionPause
	}
	if c.tests["reqbuffer"] {
		_ = proxywasm.ReplaceHttpRequestBody([]byte(fmt.Sprintf("total=%d", bodySize)))
	}
	return types.ActionContinue
}

func (c *httpContext) OnHttpResponseHeaders(numHeaders int, endOfStream bool) types.Action {
	_, err := proxywasm.GetHttpRequestHeader(":path")
	c.note("x-reqhdr-after", errString(err))
	st, _ := proxywasm.GetHttpResponseHeader(":status")
	c.note("x-probe-status", st)
	c.note("x-probe-resp-eos", strconv.FormatBool(endOfStream))
	c.note("x-probe-code", propInt("response", "code"))
	if c.tests["local-twice"] {
		err := proxywasm.SendHttpResponse(500, nil, []byte("second"), -1)
		c.note("x-second-local", errString(err))
	}
	if c.tests["hdr"] || c.tests["upper"] || c.tests["buffer"] {
		_ = proxywasm.RemoveHttpResponseHeader("content-length")
		_ = proxywasm.AddHttpResponseHeader("x-resp-added", "yes")
	}
	for _, kv := range c.seen {
		_ = proxywasm.AddHttpResponseHeader(kv[0], kv[1])
	}
	return types.ActionContinue
}

func (c *httpContext) OnHttpResponseBody(bodySize int, endOfStream bool) types.Action {
	if c.tests["trap-body"] {
		panic("probe: trap in body")
	}
	if c.tests["buffer"] {
		if !endOfStream {
			return types.ActionPause
		}
		body, _ := proxywasm.GetHttpResponseBody(0, bodySize)
		_ = proxywasm.ReplaceHttpResponseBody([]byte(fmt.Sprintf("len=%d body=%s", bodySize, body)))
		return types.ActionContinue
	}
	if c.tests["upper"] && bodySize > 0 {
		body, _ := proxywasm.GetHttpResponseBody(0, bodySize)
		_ = proxywasm.ReplaceHttpResponseBody(bytes.ToUpper(body))
	}
	return types.ActionContinue
}

func (c *httpContext) OnHttpStreamDone() {
	c.plugin.active.Add(-1)
	path, err := proxywasm.GetHttpRequestHeader(":path")
	if err != nil {
		path = "<" + errString(err) + ">"
	}
	status, err := proxywasm.GetHttpResponseHeader(":status")
	if err != nil {
		status = "<" + errString(err) + ">"
	}
	werr := proxywasm.AddHttpResponseHeader("x-too-late", "1")
	proxywasm.LogWarnf("probe-log ctx=%d code=%s details=%s flags=%s path=%s resp_status=%s log_write=%s",
		c.id, propInt("response", "code"), prop("response", "code_details"), propInt("response", "flags"), path,
		status, errString(werr))
}
