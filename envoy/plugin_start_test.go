package envoy_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// builtPlugin returns build/mcp-resume-guard.wasm; make test builds it first.
func builtPlugin(t *testing.T) []byte {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join(repoRoot, "build", "mcp-resume-guard.wasm"))
	if err != nil {
		t.Skip("build/mcp-resume-guard.wasm not built (make build):", err)
	}
	return wasm
}

// startPlugin runs the built plugin with a deployment's configuration in the
// embedded host, with Envoy 1.33–1.38's WASI, as Envoy starts it.
func startPlugin(t *testing.T, wasm []byte, pluginConfig, vmID string) (*wasmhost.Host, error) {
	t.Helper()
	h, err := wasmhost.New(context.Background(), wasmhost.Options{
		Wasm:         wasm,
		PluginConfig: []byte(pluginConfig),
		VMs:          2,
		RootID:       "mcp-resume-guard",
		PluginName:   "mcp-resume-guard",
		VMID:         vmID,
	})
	if err == nil {
		t.Cleanup(func() { h.Close(context.Background()) })
	}
	return h, err
}

func request(method, path string, kv ...string) wasmhost.Headers {
	h := wasmhost.Headers{}
	h.Add(":method", method)
	h.Add(":path", path)
	h.Add(":authority", "mcp.example")
	h.Add(":scheme", "http")
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// crossTransportResume is the incident's resume: at the Streamable HTTP
// endpoint, with a cursor minted on the legacy stream.
func crossTransportResume(route string) wasmhost.Exchange {
	resp := wasmhost.Headers{}
	resp.Add(":status", "200")
	resp.Add("content-type", "text/event-stream")
	return wasmhost.Exchange{
		Info:         wasmhost.StreamInfo{RouteName: route},
		Request:      request("GET", "/mcp", "accept", "text/event-stream", "mcp-session-id", "s-1", "last-event-id", "sse:e-104"),
		Response:     resp,
		ResponseBody: [][]byte{[]byte("id: e-105\ndata: {}\n\n")},
	}
}

func assertReinit(t *testing.T, h *wasmhost.Host, x wasmhost.Exchange) {
	t.Helper()
	res, err := h.Simulate(x)
	if err != nil {
		t.Fatal(err)
	}
	if res.Upstream || res.Local == nil || res.Local.Status != 404 || !bytes.Contains(res.Local.Body, []byte("cross_transport")) {
		t.Fatalf("cross-transport resume: upstream=%v local=%+v; want a local 404 with reason cross_transport", res.Upstream, res.Local)
	}
	if got := h.Metrics()["mcp_resume_guard_reinit_cross_transport_total"]; got != 1 {
		t.Errorf("mcp_resume_guard_reinit_cross_transport_total = %d; want 1", got)
	}
}

// TestBuiltPluginStartsWithEnvoyConfig runs the real .wasm with the exact
// configuration envoy.yaml embeds, and checks that the route names it
// carries give each route its transport.
func TestBuiltPluginStartsWithEnvoyConfig(t *testing.T) {
	wasm := builtPlugin(t)
	d, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	h, err := startPlugin(t, wasm, d.PluginJSON, d.Plugin.GetVmConfig().GetVmId())
	if err != nil {
		t.Fatalf("the plugin refuses envoy.yaml's configuration: %v", err)
	}
	assertReinit(t, h, crossTransportResume("mcp-streamable"))

	// The legacy stream's route tags event IDs with sse:.
	resp := wasmhost.Headers{}
	resp.Add(":status", "200")
	resp.Add("content-type", "text/event-stream")
	res, err := h.Simulate(wasmhost.Exchange{
		Info:         wasmhost.StreamInfo{RouteName: "mcp-legacy-stream"},
		Request:      request("GET", "/sse", "accept", "text/event-stream"),
		Response:     resp,
		ResponseBody: [][]byte{[]byte("event: endpoint\ndata: /messages?sessionId=s-2\n\nid: e-100\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if body := bytes.Join(res.ResponseBody, nil); !bytes.Contains(body, []byte("id: sse:e-100\n")) {
		t.Errorf("on route mcp-legacy-stream the event ID was not tagged sse:\n%s", body)
	}
}

// TestBuiltPluginStartsWithIstioConfig does the same with the WasmPlugin's
// pluginConfig, where routes are chosen by path and Istio sets no vm_id.
func TestBuiltPluginStartsWithIstioConfig(t *testing.T) {
	wasm := builtPlugin(t)
	_, pluginJSON, err := checkWasmPlugin(readFile(t, wasmPluginFile))
	if err != nil {
		t.Fatal(err)
	}
	h, err := startPlugin(t, wasm, pluginJSON, "")
	if err != nil {
		t.Fatalf("the plugin refuses the WasmPlugin's pluginConfig: %v", err)
	}
	assertReinit(t, h, crossTransportResume("default"))
}

// TestBuiltPluginRefusesBrokenConfig: a configuration the parser rejects
// stops the plugin at start (in Envoy: the bootstrap is refused).
func TestBuiltPluginRefusesBrokenConfig(t *testing.T) {
	wasm := builtPlugin(t)
	d, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(d.PluginJSON, `"max_line_bytes"`, `"max_line_byte"`, 1)
	if broken == d.PluginJSON {
		t.Fatal("envoy.yaml's configuration no longer sets max_line_bytes; update this test")
	}
	_, err = startPlugin(t, wasm, broken, "mcp-resume-guard")
	if err == nil {
		t.Fatal("the plugin started with an unknown configuration key")
	}
	t.Logf("refused: %v", err)
}
