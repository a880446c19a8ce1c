package gateway_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	egv1a1 "github.com/envoyproxy/gateway/api/v1alpha1"
	"github.com/google/go-containerregistry/pkg/name"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/variants"
)

// The manifests of the Envoy Gateway deployment.
const (
	routeFile   = "httproute.yaml"
	policyFile  = "extensionpolicy.yaml"
	trafficFile = "backendtrafficpolicy.yaml"
)

// sessionHeader is the header every shipped topology hashes on.
const sessionHeader = "mcp-session-id"

// transportOfPath is the MCP transport each endpoint path speaks;
// streamingPaths carry long-lived SSE streams.
var (
	transportOfPath = map[string]cursor.Transport{
		"/mcp":      cursor.TransportHTTP,
		"/sse":      cursor.TransportSSE,
		"/messages": cursor.TransportSSE, // PathPrefix: /messages/ (the Python SDK's) too
		"/message":  cursor.TransportSSE, // the TypeScript SDK's SSEServerTransport
	}
	streamingPaths = []string{"/mcp", "/sse"}
)

// manifests are the three files, as text.
type manifests map[string][]byte

func readManifests(t *testing.T) manifests {
	t.Helper()
	m := manifests{}
	for _, f := range []string{routeFile, policyFile, trafficFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m[f] = b
	}
	return m
}

// checkDeployment validates the three manifests against the CRDs and the
// Go types of Envoy Gateway and Gateway API, then checks that together
// they guard every MCP path with one Wasm VM, keep SSE streams open, and
// pin each MCP session to one backend pod.
func checkDeployment(m manifests) error {
	var errs []error
	for _, f := range []string{routeFile, policyFile, trafficFile} {
		if err := validateAgainstCRD(m[f]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
		}
	}
	var (
		route   gwapiv1.HTTPRoute
		policy  egv1a1.EnvoyExtensionPolicy
		traffic egv1a1.BackendTrafficPolicy
	)
	for f, v := range map[string]any{routeFile: &route, policyFile: &policy, trafficFile: &traffic} {
		if err := yaml.UnmarshalStrict(m[f], v); err != nil {
			errs = append(errs, fmt.Errorf("%s: Go types: %w", f, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	// The route: every MCP path, SSE routes without a request timeout.
	routed := map[string]bool{}
	for i, rule := range route.Spec.Rules {
		for _, match := range rule.Matches {
			if match.Path == nil || match.Path.Value == nil {
				continue
			}
			path := *match.Path.Value
			if _, mcp := transportOfPath[path]; !mcp {
				continue
			}
			routed[path] = true
			if !contains(streamingPaths, path) {
				continue
			}
			if rule.Timeouts == nil || rule.Timeouts.Request == nil || *rule.Timeouts.Request != "0s" {
				fail("%s: rules[%d] (%s) serves SSE streams: set timeouts.request: 0s, or the route timeout cuts every stream", routeFile, i, path)
			}
		}
	}
	for path := range transportOfPath {
		if !routed[path] {
			fail("%s: no rule matches the MCP path %s; the policies attach to this route only", routeFile, path)
		}
	}

	// The extension policy: the route, one Wasm VM, the plugin's own parser.
	checkTarget(policyFile, policy.Namespace, policy.Spec.PolicyTargetReferences, &route, fail)
	if len(policy.Spec.Wasm) != 1 {
		fail("%s: %d wasm entries; want one (each entry is its own VM id, and so its own watermarks)", policyFile, len(policy.Spec.Wasm))
	} else {
		checkWasm(policy.Spec.Wasm[0], routed, fail)
	}

	// The traffic policy: consistent hashing on the MCP session.
	checkTarget(trafficFile, traffic.Namespace, traffic.Spec.PolicyTargetReferences, &route, fail)
	lb := traffic.Spec.LoadBalancer
	switch {
	case lb == nil || lb.Type != egv1a1.ConsistentHashLoadBalancerType || lb.ConsistentHash == nil:
		fail("%s: loadBalancer must be type ConsistentHash; sessions keep their pod only with a hash on the session", trafficFile)
	case lb.ConsistentHash.Type != egv1a1.HeadersConsistentHashType:
		fail("%s: consistentHash type %s; hash on Headers [%s] (Header is deprecated)", trafficFile, lb.ConsistentHash.Type, sessionHeader)
	case !slicesHasHeader(lb.ConsistentHash.Headers, sessionHeader):
		fail("%s: consistentHash headers do not include %s, the MCP session", trafficFile, sessionHeader)
	}
	return errors.Join(errs...)
}

// checkTarget checks that a policy targets exactly the MCP route, in its
// namespace.
func checkTarget(file, namespace string, refs egv1a1.PolicyTargetReferences, route *gwapiv1.HTTPRoute, fail func(string, ...any)) {
	if namespace != route.Namespace {
		fail("%s: namespace %q; the HTTPRoute is in %q (policies attach within their namespace)", file, namespace, route.Namespace)
	}
	if refs.TargetRef != nil || len(refs.TargetSelectors) > 0 || len(refs.TargetRefs) != 1 {
		fail("%s: want exactly one targetRefs entry, the HTTPRoute %q", file, route.Name)
		return
	}
	ref := refs.TargetRefs[0]
	if ref.Group != gwapiv1.GroupName || ref.Kind != "HTTPRoute" || string(ref.Name) != route.Name {
		fail("%s: targets %s/%s %q; want %s/HTTPRoute %q", file, ref.Group, ref.Kind, ref.Name, gwapiv1.GroupName, route.Name)
	}
}

// checkWasm checks the plugin entry: the image make oci builds, fail open,
// and a configuration the plugin accepts that guards every routed MCP path
// with its transport.
func checkWasm(w egv1a1.Wasm, routed map[string]bool, fail func(string, ...any)) {
	if w.Code.Type != egv1a1.ImageWasmCodeSourceType || w.Code.Image == nil {
		fail("%s: code.type %s; the plugin ships as the OCI image make oci builds (type Image)", policyFile, w.Code.Type)
	} else if _, err := name.ParseReference(w.Code.Image.URL, name.StrictValidation); err != nil || strings.Contains(w.Code.Image.URL, "://") {
		fail("%s: code.image.url %q: want registry/image:tag or registry/image@sha256:digest, without a scheme", policyFile, w.Code.Image.URL)
	}
	if w.FailOpen == nil || !*w.FailOpen {
		fail("%s: failOpen must be true: a failed plugin must leave MCP traffic unguarded, not refused (as FAIL_OPEN in envoy.yaml)", policyFile)
	}
	if w.Config == nil {
		fail("%s: config is missing; the plugin would guard nothing", policyFile)
		return
	}
	cfg, err := config.Parse(w.Config.Raw)
	if err != nil {
		fail("%s: config: the plugin rejects it: %v", policyFile, err)
		return
	}
	for i, r := range cfg.Routes {
		if r.RouteName != "" {
			fail("%s: config routes[%d] matches route_name %q: Envoy Gateway names routes itself; match by path_prefix", policyFile, i, r.RouteName)
		}
	}
	for path := range routed {
		got, guarded := transportOf(cfg, path)
		switch want := transportOfPath[path]; {
		case !guarded:
			fail("%s: config guards no route for %s", policyFile, path)
		case got != want:
			fail("%s: config gives %s transport %v; it speaks %v", policyFile, path, got, want)
		}
	}
}

// transportOf returns the transport the plugin's first matching route
// gives path.
func transportOf(cfg config.Config, path string) (cursor.Transport, bool) {
	for _, r := range cfg.Routes {
		if r.RouteName == "" && strings.HasPrefix(path, r.PathPrefix) {
			return r.Transport, true
		}
	}
	return 0, false
}

func slicesHasHeader(hs []*egv1a1.Header, want string) bool {
	for _, h := range hs {
		if h != nil && strings.EqualFold(h.Name, want) {
			return true
		}
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestEnvoyGatewayDeployment(t *testing.T) {
	m := readManifests(t)
	if err := checkDeployment(m); err != nil {
		t.Fatal(err)
	}
	// The plugin configuration is the one published for path matching.
	var policy egv1a1.EnvoyExtensionPolicy
	if err := yaml.UnmarshalStrict(m[policyFile], &policy); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("..", "plugin-config", "paths.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got, wantV any
	if err := json.Unmarshal(policy.Spec.Wasm[0].Config.Raw, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &wantV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("%s's plugin configuration differs from envoy/plugin-config/paths.json:\n%s\n%s", policyFile, policy.Spec.Wasm[0].Config.Raw, want)
	}
}

// TestEnvoyGatewayVariants: each broken variant fails for its own reason
// (the CRD schema, a CEL rule, the Go types, the plugin's parser or the
// deployment checks); the valid variants pass.
func TestEnvoyGatewayVariants(t *testing.T) {
	good := readManifests(t)
	cases := []struct {
		name, file, old, new, wantErr string
	}{
		{"pinned digest", policyFile, "url: ghcr.io/mcp-resume-guard/mcp-resume-guard:v0.2.0", "url: ghcr.io/mcp-resume-guard/mcp-resume-guard@sha256:" + strings.Repeat("ab", 32), ""},
		{"maglev table size", trafficFile, "      type: Headers\n", "      type: Headers\n      tableSize: 65537\n", ""},
		// The CRD schemas and rules.
		{"unknown field", policyFile, "failOpen: true", "failOpen: true\n    priority: 1", `unknown field "spec.wasm[0].priority"`},
		{"code type outside the enum", policyFile, "type: Image", "type: OCI", `Unsupported value: "OCI"`},
		{"image type without image", policyFile, "      image:\n", "      http:\n", "If type is Image, image field needs to be set"},
		{"consistent hash without its settings", trafficFile, "    consistentHash:\n      # The Streamable HTTP session, also carried by the seed's resume of a\n      # legacy session.\n      type: Headers\n      headers:\n      - name: mcp-session-id\n", "", "consistentHash field needs to be set"},
		{"headers type without headers", trafficFile, "      headers:\n      - name: mcp-session-id\n", "      header:\n        name: mcp-session-id\n", "If consistent hash type is headers, the headers field must be set"},
		{"table size not allowed", trafficFile, "      type: Headers\n", "      type: Headers\n      tableSize: 1\n", "tableSize"},
		{"route path without a slash", routeFile, "value: /messages}", "value: messages}", "must be an absolute path"},
		{"Gateway API type in the wrong version", routeFile, "apiVersion: gateway.networking.k8s.io/v1\n", "apiVersion: gateway.networking.k8s.io/v2\n", "no served CRD"},
		{"typo in the Gateway API route", routeFile, "backendRefs:", "backendRef:", "backendRef"},
		// The deployment checks.
		{"round robin", trafficFile, "    type: ConsistentHash\n    consistentHash:\n      # The Streamable HTTP session, also carried by the seed's resume of a\n      # legacy session.\n      type: Headers\n      headers:\n      - name: mcp-session-id\n", "    type: RoundRobin\n", "loadBalancer must be type ConsistentHash"},
		{"hash on another header", trafficFile, "- name: mcp-session-id", "- name: x-request-id", "do not include mcp-session-id"},
		{"hash on the client IP", trafficFile, "      type: Headers\n      headers:\n      - name: mcp-session-id\n", "      type: SourceIP\n", "consistentHash type SourceIP"},
		{"fail closed", policyFile, "failOpen: true", "failOpen: false", "failOpen must be true"},
		{"image with a scheme", policyFile, "url: ghcr.io", "url: oci://ghcr.io", "without a scheme"},
		{"plugin key the parser rejects", policyFile, "- path_prefix: /mcp", "- path: /mcp", `unknown key "path"`},
		{"plugin transport wrong for the path", policyFile, "      - path_prefix: /mcp\n        transport: http", "      - path_prefix: /mcp\n        transport: sse", "gives /mcp transport sse"},
		{"plugin misses a path", policyFile, "      - path_prefix: /message\n        transport: sse\n", "", "guards no route for /message"},
		{"route names in Envoy Gateway", policyFile, "- path_prefix: /mcp", "- route_name: mcp-streamable", "match by path_prefix"},
		{"two Wasm entries", policyFile, "  wasm:\n", "  wasm:\n  - name: other\n    code: {type: Image, image: {url: registry.example.com/other:v1}}\n", "2 wasm entries"},
		{"policy targets another route", policyFile, "    name: mcp\n", "    name: mcp-legacy\n", `want gateway.networking.k8s.io/HTTPRoute "mcp"`},
		{"traffic policy in another namespace", trafficFile, "namespace: mcp", "namespace: default", `namespace "default"`},
		{"SSE route with a request timeout", routeFile, "    timeouts:\n      request: 0s\n", "    timeouts:\n      request: 15s\n", "serves SSE streams"},
		{"no legacy message rule", routeFile, "value: /messages}", "value: /msg}", "MCP path /messages"},
		{"duplicate YAML key", routeFile, "  name: mcp\n", "  name: mcp\n  name: mcp2\n", "YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := string(good[tc.file])
			if !strings.Contains(text, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", tc.file, tc.old)
			}
			m := manifests{}
			for k, v := range good {
				m[k] = v
			}
			m[tc.file] = []byte(strings.Replace(text, tc.old, tc.new, 1))
			err := checkDeployment(m)
			variants.Check(t, err, tc.wantErr)
		})
	}
}
