package envoy_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	wasmfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/wasm/v3"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/variants"
)

const frontTierFile = "ha/front.yaml"

// The session keys every shipped topology hashes on: the Streamable HTTP
// session header (also the seed's resume of a legacy session) and the
// legacy message endpoint's query parameter.
const (
	sessionHeader = "mcp-session-id"
	sessionQuery  = "sessionId"
)

// checkFrontTier parses an Envoy front tier strictly against Envoy's API,
// runs its validation rules, and checks that it sends every MCP request of
// a session to one guard replica, with the timeouts SSE needs, and runs no
// guard itself. guardPort is the port the guard tier (envoy.yaml) listens
// on.
func checkFrontTier(yamlText []byte, guardPort uint32) error {
	js, err := strictJSON(yamlText)
	if err != nil {
		return err
	}
	var b bootstrapv3.Bootstrap
	if err := unmarshalStrict(js, &b); err != nil {
		return fmt.Errorf("Envoy bootstrap schema: %w", err)
	}
	if err := validateTree(&b); err != nil {
		return fmt.Errorf("Envoy validation rules: %w", err)
	}
	hcms, err := connectionManagers(&b)
	if err != nil {
		return err
	}
	if len(hcms) != 1 {
		return fmt.Errorf("want exactly one HTTP connection manager, found %d", len(hcms))
	}
	hcm := hcms[0]
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if t := hcm.GetStreamIdleTimeout(); t == nil || t.AsDuration() <= 0 {
		fail("http_connection_manager: stream_idle_timeout must be set and positive (as in envoy.yaml)")
	}
	filters := hcm.GetHttpFilters()
	for _, f := range filters {
		if f.GetTypedConfig().MessageIs(&wasmfilterv3.Wasm{}) {
			fail("http_filters: %s is a Wasm filter; the front tier runs no guard (the guard tier does; both would tag event IDs twice)", f.GetName())
		}
	}
	if len(filters) == 0 || !filters[len(filters)-1].GetTypedConfig().MessageIs(&routerv3.Router{}) {
		fail("http_filters: the router must be last")
	}

	clusters := map[string]*clusterv3.Cluster{}
	for _, c := range b.GetStaticResources().GetClusters() {
		clusters[c.GetName()] = c
	}
	seen := map[string]bool{}
	for _, vh := range hcm.GetRouteConfig().GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			path := r.GetMatch().GetPath()
			if _, mcp := transportOfPath[path]; !mcp {
				continue
			}
			seen[path] = true
			name, ra := r.GetName(), r.GetRoute()
			c, ok := clusters[ra.GetCluster()]
			if !ok {
				fail("route %q: cluster %q is not defined", name, ra.GetCluster())
				continue
			}
			if p := c.GetLbPolicy(); p != clusterv3.Cluster_RING_HASH && p != clusterv3.Cluster_MAGLEV {
				fail("route %q: cluster %q balances with %v; sessions keep their guard replica only with RING_HASH or MAGLEV", name, c.GetName(), p)
			}
			header, query := false, false
			for _, hp := range ra.GetHashPolicy() {
				header = header || strings.EqualFold(hp.GetHeader().GetHeaderName(), sessionHeader)
				query = query || hp.GetQueryParameter().GetName() == sessionQuery
			}
			if !header || !query {
				fail("route %q: hash_policy must hash on header %s (found: %t) and on query parameter %s (found: %t)", name, sessionHeader, header, sessionQuery, query)
			}
			if slices.Contains(streamingPaths, path) {
				if t := ra.GetTimeout(); t == nil || t.AsDuration() != 0 {
					fail("route %q serves SSE streams: set timeout: 0s (Envoy's default 15 s cuts every stream)", name)
				}
			}
		}
	}
	for path := range transportOfPath {
		if !seen[path] {
			fail("no route matches the MCP path %s", path)
		}
	}
	for _, c := range clusters {
		for _, le := range c.GetLoadAssignment().GetEndpoints() {
			for _, ep := range le.GetLbEndpoints() {
				if p := ep.GetEndpoint().GetAddress().GetSocketAddress().GetPortValue(); p != guardPort {
					fail("cluster %q: endpoint port %d; the guard tier (envoy.yaml) listens on %d", c.GetName(), p, guardPort)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// guardListenerPort returns the port envoy.yaml listens on.
func guardListenerPort(t *testing.T) uint32 {
	t.Helper()
	d, err := checkBootstrap(readFile(t, bootstrapFile))
	if err != nil {
		t.Fatalf("%s: %v", bootstrapFile, err)
	}
	ls := d.Bootstrap.GetStaticResources().GetListeners()
	if len(ls) != 1 {
		t.Fatalf("%s has %d listeners, want 1", bootstrapFile, len(ls))
	}
	return ls[0].GetAddress().GetSocketAddress().GetPortValue()
}

func TestEnvoyFrontTier(t *testing.T) {
	if err := checkFrontTier(readFile(t, frontTierFile), guardListenerPort(t)); err != nil {
		t.Fatalf("%s: %v", frontTierFile, err)
	}
}

// TestEnvoyFrontTierVariants: each broken variant fails for its own reason;
// MAGLEV instead of RING_HASH is as good.
func TestEnvoyFrontTierVariants(t *testing.T) {
	good := string(readFile(t, frontTierFile))
	port := guardListenerPort(t)
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"MAGLEV", "    lb_policy: RING_HASH\n    ring_hash_lb_config:\n      minimum_ring_size: 1024\n", "    lb_policy: MAGLEV\n", ""},
		{"round robin", "lb_policy: RING_HASH", "lb_policy: ROUND_ROBIN", "balances with ROUND_ROBIN"},
		{"least request", "lb_policy: RING_HASH", "lb_policy: LEAST_REQUEST", "balances with LEAST_REQUEST"},
		{"no hash on the session header", "header_name: mcp-session-id", "header_name: x-session-id", "hash on header mcp-session-id (found: false)"},
		{"the Python SDK's query parameter only", "name: sessionId", "name: session_id", "query parameter sessionId (found: false)"},
		{"no hash policy on the streams", "                  hash_policy: *session_hash\n", "", `route "mcp-legacy-stream": hash_policy`},
		{"default route timeout on an SSE route", "timeout: 0s", "timeout: 15s", "serves SSE streams"},
		{"guard in the front tier too", "          http_filters:\n", "          http_filters:\n          - name: envoy.filters.http.wasm\n            typed_config:\n              \"@type\": type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm\n              config: {vm_config: {runtime: envoy.wasm.runtime.v8, code: {local: {filename: /etc/envoy/g.wasm}}}}\n", "runs no guard"},
		{"stream idle timeout disabled", "stream_idle_timeout: 300s", "stream_idle_timeout: 0s", "stream_idle_timeout must be set"},
		{"route to a cluster that does not exist", "cluster: mcp_guard_tier", "cluster: mcp_guards", `cluster "mcp_guards" is not defined`},
		{"no legacy message route", "match: { path: /messages }", "match: { path: /message }", "MCP path /messages"},
		{"wrong guard port", "address: mcp-guard, port_value: 10000", "address: mcp-guard, port_value: 8080", "listens on 10000"},
		{"typo in a field name", "hash_policy: &session_hash", "hash_polcy: &session_hash", `unknown field "hash_polcy"`},
		{"Envoy validation rule", "minimum_ring_size: 1024", "minimum_ring_size: 10000000", "MinimumRingSize"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", frontTierFile, tc.old)
			}
			err := checkFrontTier([]byte(strings.Replace(good, tc.old, tc.new, 1)), port)
			variants.Check(t, err, tc.wantErr)
		})
	}
}
