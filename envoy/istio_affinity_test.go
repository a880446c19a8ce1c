package envoy_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	networkingv1 "istio.io/api/networking/v1"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/variants"
)

const (
	destinationRuleFile = "istio/destinationrule.yaml"
	istioNetworkingAPI  = "networking.istio.io/v1"
)

// checkDestinationRule parses the MCP server's DestinationRule strictly
// against istio.io/api and checks that it pins every MCP session to one
// server pod (and so to the guard in that pod's sidecar), in the namespace
// the WasmPlugin deploys the guard to.
func checkDestinationRule(yamlText []byte, guardNamespace string) error {
	obj, err := parseManifest(yamlText, istioNetworkingAPI, "DestinationRule")
	if err != nil {
		return err
	}
	var dr networkingv1.DestinationRule
	if err := unmarshalStrict(obj.Spec, &dr); err != nil {
		return fmt.Errorf("DestinationRule schema: %w", err)
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if obj.Metadata.Namespace != guardNamespace {
		fail("metadata.namespace %q; the WasmPlugin runs the guard in %q, next to the MCP server", obj.Metadata.Namespace, guardNamespace)
	}
	host := dr.GetHost()
	switch parts := strings.Split(host, "."); {
	case host == "":
		fail("host is empty; name the MCP server's Service")
	case strings.Contains(host, "*"):
		fail("host %q is a wildcard; the rule belongs to the MCP server's Service only", host)
	case len(parts) > 1 && parts[1] != guardNamespace:
		fail("host %q is in namespace %q; the MCP server (and the WasmPlugin) are in %q", host, parts[1], guardNamespace)
	}
	checkLB := func(where string, lb interface {
		GetSimple() networkingv1.LoadBalancerSettings_SimpleLB
		GetConsistentHash() *networkingv1.LoadBalancerSettings_ConsistentHashLB
	}) {
		ch := lb.GetConsistentHash()
		switch {
		case ch == nil:
			fail("%s: loadBalancer %v; sessions keep their pod (and its guard) only with consistentHash on httpHeaderName %s", where, lb.GetSimple(), sessionHeader)
		case !strings.EqualFold(ch.GetHttpHeaderName(), sessionHeader):
			fail("%s: consistentHash hashes on %s; hash on httpHeaderName %s, the MCP session", where, hashKey(ch), sessionHeader)
		}
	}
	tp := dr.GetTrafficPolicy()
	if tp.GetLoadBalancer() == nil {
		fail("trafficPolicy.loadBalancer is not set; set consistentHash.httpHeaderName: %s", sessionHeader)
	} else {
		checkLB("trafficPolicy", tp.GetLoadBalancer())
	}
	for i, pl := range tp.GetPortLevelSettings() {
		if pl.GetLoadBalancer() != nil {
			checkLB(fmt.Sprintf("trafficPolicy.portLevelSettings[%d] (port %d)", i, pl.GetPort().GetNumber()), pl.GetLoadBalancer())
		}
	}
	for _, ss := range dr.GetSubsets() {
		if lb := ss.GetTrafficPolicy().GetLoadBalancer(); lb != nil {
			checkLB("subset "+ss.GetName(), lb)
		}
	}
	return errors.Join(errs...)
}

// hashKey names what a consistent hash hashes on.
func hashKey(ch *networkingv1.LoadBalancerSettings_ConsistentHashLB) string {
	switch {
	case ch.GetHttpHeaderName() != "":
		return "header " + ch.GetHttpHeaderName()
	case ch.GetHttpQueryParameterName() != "":
		return "query parameter " + ch.GetHttpQueryParameterName() + " (legacy message POSTs only)"
	case ch.GetUseSourceIp():
		return "the client IP (clients behind one NAT share a pod; a client that changes address loses it)"
	case ch.GetHttpCookie() != nil:
		return "cookie " + ch.GetHttpCookie().GetName() + " (MCP clients keep no cookies)"
	}
	return "nothing"
}

// guardNamespace is the namespace envoy/istio/wasmplugin.yaml deploys to.
func guardNamespace(t *testing.T) string {
	t.Helper()
	obj, err := parseManifest(readFile(t, wasmPluginFile), istioAPI, "WasmPlugin")
	if err != nil {
		t.Fatalf("%s: %v", wasmPluginFile, err)
	}
	return obj.Metadata.Namespace
}

func TestIstioDestinationRule(t *testing.T) {
	if err := checkDestinationRule(readFile(t, destinationRuleFile), guardNamespace(t)); err != nil {
		t.Fatalf("%s: %v", destinationRuleFile, err)
	}
}

func TestIstioDestinationRuleVariants(t *testing.T) {
	good := string(readFile(t, destinationRuleFile))
	ns := guardNamespace(t)
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"ring hash", "        maglev: {}\n", "        ringHash: {minimumRingSize: 1024}\n", ""},
		{"short host name", "host: mcp-server.mcp.svc.cluster.local", "host: mcp-server", ""},
		{"round robin", "      consistentHash:\n        # Header names are case-insensitive; Envoy sees them lowercased.\n        httpHeaderName: mcp-session-id\n        # Maglev moves few sessions when pods come and go; each moved\n        # session's next resume carries a cursor the new pod's guard does not\n        # know (forwarded, or re-initialized with unknown_cursor: reinit).\n        maglev: {}\n", "      simple: ROUND_ROBIN\n", "loadBalancer ROUND_ROBIN"},
		{"another header", "httpHeaderName: mcp-session-id", "httpHeaderName: x-session-id", "x-session-id"},
		{"client IP", "httpHeaderName: mcp-session-id", "useSourceIp: true", "the client IP"},
		{"legacy query parameter only", "httpHeaderName: mcp-session-id", "httpQueryParameterName: sessionId", "query parameter sessionId"},
		{"two hash keys", "httpHeaderName: mcp-session-id", "httpHeaderName: mcp-session-id\n        useSourceIp: true", "oneof"},
		{"port override without affinity", "  trafficPolicy:\n", "  trafficPolicy:\n    portLevelSettings:\n    - port: {number: 8080}\n      loadBalancer: {simple: LEAST_REQUEST}\n", "port 8080"},
		{"no load balancer", "  trafficPolicy:\n    loadBalancer:\n      consistentHash:\n        # Header names are case-insensitive; Envoy sees them lowercased.\n        httpHeaderName: mcp-session-id\n        # Maglev moves few sessions when pods come and go; each moved\n        # session's next resume carries a cursor the new pod's guard does not\n        # know (forwarded, or re-initialized with unknown_cursor: reinit).\n        maglev: {}\n", "  trafficPolicy:\n    connectionPool:\n      http: {idleTimeout: 300s}\n", "loadBalancer is not set"},
		{"older API version", "apiVersion: networking.istio.io/v1\n", "apiVersion: networking.istio.io/v1alpha3\n", "want networking.istio.io/v1"},
		{"other namespace", "  namespace: mcp\n", "  namespace: default\n", `the WasmPlugin runs the guard in "mcp"`},
		{"host in another namespace", "host: mcp-server.mcp.svc.cluster.local", "host: mcp-server.tools.svc.cluster.local", `namespace "tools"`},
		{"wildcard host", "host: mcp-server.mcp.svc.cluster.local", `host: "*.mcp.svc.cluster.local"`, "wildcard"},
		{"typo in a field name", "consistentHash:", "consistenHash:", "consistenHash"},
		{"duplicate YAML key", "  name: mcp-server-session-affinity\n", "  name: mcp-server-session-affinity\n  name: other\n", "YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", destinationRuleFile, tc.old)
			}
			err := checkDestinationRule([]byte(strings.Replace(good, tc.old, tc.new, 1)), ns)
			variants.Check(t, err, tc.wantErr)
		})
	}
}
