package envoy_test

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	wasmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/wasm/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/variants"
)

const (
	bootstrapFile = "envoy.yaml"
	// wasmInContainer is where envoy.yaml loads the plugin from, and where
	// docker-compose.yaml mounts it.
	wasmInContainer = "/etc/envoy/mcp-resume-guard.wasm"
)

var mcpRoutes = []string{"mcp-legacy-message", "mcp-legacy-messages", "mcp-legacy-messages-slash", "mcp-legacy-stream", "mcp-streamable"}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEnvoyBootstrap(t *testing.T) {
	d, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatalf("%s: %v", bootstrapFile, err)
	}
	if !slices.Equal(d.EnabledRoutes, mcpRoutes) {
		t.Errorf("the filter is enabled on %v; want exactly the MCP routes %v", d.EnabledRoutes, mcpRoutes)
	}
	if _, ok := d.Routes["passthrough"]; !ok {
		t.Error("no passthrough route: traffic outside the MCP endpoints should reach the upstream without the filter")
	}
	if got := d.Plugin.GetFailurePolicy(); got != wasmv3.FailurePolicy_FAIL_OPEN {
		t.Errorf("failure_policy = %v; the docs explain FAIL_OPEN", got)
	}
	if got := d.Plugin.GetVmConfig().GetCode().GetLocal().GetFilename(); got != wasmInContainer {
		t.Errorf("the plugin loads from %s; docker-compose.yaml mounts it at %s", got, wasmInContainer)
	}
	if d.Plugin.GetVmConfig().GetVmId() != "mcp-resume-guard" {
		t.Errorf("vm_id = %q; want mcp-resume-guard", d.Plugin.GetVmConfig().GetVmId())
	}
	// The embedded configuration is the one published as an example.
	assertSameJSON(t, d.PluginJSON, string(readFile(t, "plugin-config/envoy.json")), "envoy.yaml's plugin configuration vs plugin-config/envoy.json")
	for _, name := range mcpRoutes {
		r := d.Routes[name]
		if r.GetMatch().GetPath() == "" {
			t.Errorf("route %s matches by %v; the MCP endpoints are exact paths", name, r.GetMatch())
		}
	}
}

// assertSameJSON compares two JSON texts by value.
func assertSameJSON(t *testing.T, got, want, what string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s differ:\n%s\n%s", what, got, want)
	}
}

// TestEnvoyBootstrapBrokenVariants proves that the check catches what a user
// editing envoy.yaml gets wrong: each variant must fail, and for the reason
// given.
func TestEnvoyBootstrapBrokenVariants(t *testing.T) {
	good := string(readFile(t, bootstrapFile))
	textEdits := []struct {
		name, old, new, wantErr string
	}{
		{"typo in a field name", "stream_idle_timeout: 300s", "stream_idle_timout: 300s", `unknown field "stream_idle_timout"`},
		{"unknown type URL", "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm\n", "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.WasmFilter\n", "WasmFilter"},
		{"per-route config of the wrong type", "type.googleapis.com/envoy.config.route.v3.FilterConfig", "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm", "has no per-route message"},
		{"route the plugin names is missing", "- name: mcp-legacy-messages\n", "- name: mcp-legacy-msgs\n", `names route "mcp-legacy-messages", which is not in the route table`},
		{"plugin key the parser rejects", `"max_line_bytes": 8192`, `"max_line_byte": 8192`, `unknown key "max_line_byte"`},
		{"plugin value the parser rejects", `"unacked_cursor": "rewind"`, `"unacked_cursor": "retry"`, `"unacked_cursor"`},
		{"plugin transport contradicts the path", `{"route_name": "mcp-streamable", "transport": "http"}`, `{"route_name": "mcp-streamable", "transport": "sse"}`, "serves /mcp"},
		{"bad enum value", "failure_policy: FAIL_OPEN", "failure_policy: FAIL_OPENED", "FAIL_OPENED"},
		{"failure policy left to the default", "                failure_policy: FAIL_OPEN\n", "", "failure_policy is not set"},
		{"wasm filter not disabled by default", "            disabled: true\n", "", "must be disabled: true"},
		{"per-route key names no filter", "envoy.filters.http.wasm:", "envoy.filters.http.wasm_:", `key "envoy.filters.http.wasm_" names no filter`},
		{"FilterConfig without config", "                    config: {}\n", "", "FilterConfig without config"},
		{"default route timeout on an SSE route", "timeout: 0s", "timeout: 15s", "serves SSE streams"},
		{"Envoy validation rule", "connect_timeout: 5s", "connect_timeout: -5s", "ConnectTimeout"},
		{"Envoy validation rule inside an Any", "stat_prefix: mcp_ingress", `stat_prefix: ""`, "StatPrefix"},
		{"runtime other than V8", "runtime: envoy.wasm.runtime.v8", "runtime: envoy.wasm.runtime.wamr", "want envoy.wasm.runtime.v8"},
		{"no vm_id", "vm_id: mcp-resume-guard", `vm_id: ""`, "vm_id is empty"},
		{"stream idle timeout disabled", "stream_idle_timeout: 300s", "stream_idle_timeout: 0s", "stream_idle_timeout must be set"},
		{"admin elsewhere", "port_value: 9901", "port_value: 9902", "admin: port 9902"},
		{"duplicate YAML key", "          codec_type: AUTO\n", "          codec_type: AUTO\n          codec_type: HTTP1\n", "YAML"},
		{"plugin configuration is not JSON", `"routes": [`, `"routes": [[`, "not valid JSON"},
	}
	for _, tc := range textEdits {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("envoy.yaml no longer contains %q; update this variant", tc.old)
			}
			_, err := checkBootstrap([]byte(strings.Replace(good, tc.old, tc.new, 1)))
			variants.Check(t, err, tc.wantErr)
		})
	}

	protoEdits := []struct {
		name    string
		edit    func(t *testing.T, h *hcmv3.HttpConnectionManager)
		wantErr string
	}{
		{"router not last", func(t *testing.T, h *hcmv3.HttpConnectionManager) {
			f := h.HttpFilters
			f[0], f[len(f)-1] = f[len(f)-1], f[0]
		}, "the router must be last"},
		{"wasm filter declared twice", func(t *testing.T, h *hcmv3.HttpConnectionManager) {
			dup := proto.Clone(h.HttpFilters[0]).(*hcmv3.HttpFilter)
			dup.Name = "envoy.filters.http.wasm.second"
			h.HttpFilters = append([]*hcmv3.HttpFilter{dup}, h.HttpFilters...)
		}, "declared twice"},
		{"filter enabled on a route the plugin does not know", func(t *testing.T, h *hcmv3.HttpConnectionManager) {
			r := routeNamed(t, h, "passthrough")
			r.TypedPerFilterConfig = map[string]*anypb.Any{"envoy.filters.http.wasm": mustAny(t, &routev3.FilterConfig{Config: &anypb.Any{}})}
		}, `route "passthrough" enables envoy.filters.http.wasm but the plugin configuration does not name it`},
		{"filter disabled on an MCP route", func(t *testing.T, h *hcmv3.HttpConnectionManager) {
			r := routeNamed(t, h, "mcp-streamable")
			r.TypedPerFilterConfig["envoy.filters.http.wasm"] = mustAny(t, &routev3.FilterConfig{Config: &anypb.Any{}, Disabled: true})
		}, `route "mcp-streamable", but that route does not enable`},
		{"route names not unique", func(t *testing.T, h *hcmv3.HttpConnectionManager) {
			routeNamed(t, h, "passthrough").Name = "mcp-streamable"
		}, `route name "mcp-streamable" is used twice`},
		{"route table from RDS", func(t *testing.T, h *hcmv3.HttpConnectionManager) {
			h.RouteSpecifier = &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{RouteConfigName: "mcp_routes"}}
		}, "must be inline"},
	}
	for _, tc := range protoEdits {
		t.Run(tc.name, func(t *testing.T) {
			b := parseBootstrap(t, []byte(good))
			editHCM(t, b, func(h *hcmv3.HttpConnectionManager) { tc.edit(t, h) })
			_, err := checkBootstrapProto(b)
			variants.Check(t, err, tc.wantErr)
		})
	}
}

func parseBootstrap(t *testing.T, yamlText []byte) *bootstrapv3.Bootstrap {
	t.Helper()
	js, err := strictJSON(yamlText)
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := unmarshalStrict(js, &b); err != nil {
		t.Fatal(err)
	}
	return &b
}

// editHCM unpacks the bootstrap's HTTP connection manager, applies edit and
// packs it back.
func editHCM(t *testing.T, b *bootstrapv3.Bootstrap, edit func(*hcmv3.HttpConnectionManager)) {
	t.Helper()
	f := b.GetStaticResources().GetListeners()[0].GetFilterChains()[0].GetFilters()[0]
	var h hcmv3.HttpConnectionManager
	if err := f.GetTypedConfig().UnmarshalTo(&h); err != nil {
		t.Fatal(err)
	}
	edit(&h)
	f.ConfigType = &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(t, &h)}
}

func routeNamed(t *testing.T, h *hcmv3.HttpConnectionManager, name string) *routev3.Route {
	t.Helper()
	for _, vh := range h.GetRouteConfig().GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			if r.GetName() == name {
				return r
			}
		}
	}
	t.Fatalf("no route %q", name)
	return nil
}

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
