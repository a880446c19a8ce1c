// Command contexts is a proxy-wasm plugin that says, in a log line per
// callback, which context the callback reached ("request_headers 7"). The
// abiglue tests build it with the standard-Go build and drive many HTTP
// contexts through it, interleaved, under two plugin contexts, with TCP
// contexts and HTTP callouts among them: the glue dispatches HTTP contexts
// from its own table (abiglue_contexts.go), the rest through the SDK.
package main

import (
	"strconv"

	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"
	"github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/types"
)

// tcpFrom is the first context ID that gets a TCP context rather than an
// HTTP one (the plugin context makes no HTTP context for it).
const tcpFrom = 1 << 30

func init() { proxywasm.SetVMContext(&vmContext{}) }

func main() {}

type vmContext struct{ types.DefaultVMContext }

func (*vmContext) NewPluginContext(id uint32) types.PluginContext { return &pluginContext{id: id} }

type pluginContext struct {
	types.DefaultPluginContext
	id uint32
}

func (p *pluginContext) NewHttpContext(id uint32) types.HttpContext {
	if id >= tcpFrom {
		return nil
	}
	return &stream{id: id, root: p.id}
}

func (p *pluginContext) NewTcpContext(id uint32) types.TcpContext { return &conn{id: id} }

func say(what string, id uint32) { proxywasm.LogInfo(what + " " + strconv.FormatUint(uint64(id), 10)) }

type stream struct {
	types.DefaultHttpContext
	id, root uint32
}

// OnHttpRequestHeaders says which context it reached and under which plugin
// context; with an x-callout header it dispatches an HTTP call whose answer
// says the same.
func (s *stream) OnHttpRequestHeaders(int, bool) types.Action {
	say("request_headers", s.id)
	say("root_of_"+strconv.FormatUint(uint64(s.id), 10), s.root)
	if _, err := proxywasm.GetHttpRequestHeader("x-callout"); err == nil {
		id := s.id
		_, err := proxywasm.DispatchHttpCall("upstream", [][2]string{{":path", "/"}}, nil, nil, 1000,
			func(int, int, int) { say("callout_answered", id) })
		if err != nil {
			say("callout_failed", id)
		}
	}
	return types.ActionContinue
}

func (s *stream) OnHttpRequestBody(int, bool) types.Action { return s.reached("request_body") }

func (s *stream) OnHttpRequestTrailers(int) types.Action { return s.reached("request_trailers") }

func (s *stream) OnHttpResponseHeaders(int, bool) types.Action { return s.reached("response_headers") }

func (s *stream) OnHttpResponseBody(int, bool) types.Action { return s.reached("response_body") }

func (s *stream) OnHttpResponseTrailers(int) types.Action { return s.reached("response_trailers") }

func (s *stream) OnHttpStreamDone() { say("stream_done", s.id) }

// reached says that the callback named what reached s, and continues.
func (s *stream) reached(what string) types.Action {
	say(what, s.id)
	return types.ActionContinue
}

type conn struct {
	types.DefaultTcpContext
	id uint32
}

func (c *conn) OnNewConnection() types.Action {
	say("new_connection", c.id)
	return types.ActionContinue
}

func (c *conn) OnStreamDone() { say("tcp_done", c.id) }
