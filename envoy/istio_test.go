package envoy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"google.golang.org/protobuf/encoding/protojson"
	extensionsv1alpha1 "istio.io/api/extensions/v1alpha1"
	typev1beta1 "istio.io/api/type/v1beta1"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/variants"
)

const (
	wasmPluginFile = "istio/wasmplugin.yaml"
	istioAPI       = "extensions.istio.io/v1alpha1"
	mcpPort        = 8080
)

// k8sObject is the envelope of a Kubernetes manifest; the spec is checked
// against Istio's own message.
type k8sObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec json.RawMessage `json:"spec"`
}

// parseManifest parses a Kubernetes manifest strictly and checks its
// envelope: apiVersion, kind, a name and a namespace (a resource in Istio's
// root namespace would apply mesh-wide), a spec.
func parseManifest(yamlText []byte, apiVersion, kind string) (*k8sObject, error) {
	js, err := strictJSON(yamlText)
	if err != nil {
		return nil, err
	}
	var obj k8sObject
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	switch {
	case obj.APIVersion != apiVersion:
		return nil, fmt.Errorf("apiVersion %q; want %s", obj.APIVersion, apiVersion)
	case obj.Kind != kind:
		return nil, fmt.Errorf("kind %q; want %s", obj.Kind, kind)
	case obj.Metadata.Name == "" || obj.Metadata.Namespace == "":
		return nil, fmt.Errorf("metadata: name and namespace are required (a %s in the root namespace would apply mesh-wide)", kind)
	case len(obj.Spec) == 0:
		return nil, errors.New("spec is missing")
	}
	return &obj, nil
}

// checkWasmPlugin parses an Istio WasmPlugin manifest strictly and checks
// how it deploys the guard. It returns the spec and the plugin
// configuration JSON as Istio hands it to the plugin.
func checkWasmPlugin(yamlText []byte) (*extensionsv1alpha1.WasmPlugin, string, error) {
	obj, err := parseManifest(yamlText, istioAPI, "WasmPlugin")
	if err != nil {
		return nil, "", err
	}
	var wp extensionsv1alpha1.WasmPlugin
	if err := unmarshalStrict(obj.Spec, &wp); err != nil {
		return nil, "", fmt.Errorf("WasmPlugin schema: %w", err)
	}

	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	ref, isOCI := strings.CutPrefix(wp.GetUrl(), "oci://")
	if !isOCI {
		fail("url %q: want oci://REGISTRY/IMAGE:TAG (the image make oci builds)", wp.GetUrl())
	} else if _, err := name.ParseReference(ref, name.StrictValidation); err != nil {
		fail("url %q: %v", wp.GetUrl(), err)
	}
	if len(wp.GetSelector().GetMatchLabels()) == 0 {
		fail("selector.matchLabels is empty: the plugin would run in every workload of the namespace")
	}
	if len(wp.GetTargetRefs()) > 0 || wp.GetTargetRef() != nil {
		fail("selector and targetRefs are exclusive; this manifest targets the MCP server's sidecar by selector")
	}
	if wp.GetFailStrategy() != extensionsv1alpha1.FailStrategy_FAIL_OPEN {
		fail("failStrategy %v; the docs explain FAIL_OPEN", wp.GetFailStrategy())
	}
	if wp.GetType() != extensionsv1alpha1.PluginType_HTTP {
		fail("type %v; the guard is an HTTP filter", wp.GetType())
	}
	if wp.GetPriority() == nil {
		fail("priority is not set; set it to keep the guard next to the router among other plugins")
	}
	if len(wp.GetMatch()) == 0 {
		fail("match is empty: the plugin would run on every port and direction of the workload")
	}
	for i, m := range wp.GetMatch() {
		if m.GetMode() != typev1beta1.WorkloadMode_SERVER {
			fail("match[%d].mode %v; the guard belongs on the MCP server's inbound traffic (SERVER)", i, m.GetMode())
		}
		if len(m.GetPorts()) != 1 || m.GetPorts()[0].GetNumber() != mcpPort {
			fail("match[%d].ports %v; want the MCP port %d only", i, m.GetPorts(), mcpPort)
		}
	}

	// Istio serializes the Struct to JSON and hands the plugin that string.
	pluginJSON, err := protojson.Marshal(wp.GetPluginConfig())
	if err != nil {
		return nil, "", fmt.Errorf("pluginConfig: %w", err)
	}
	cfg, err := config.Parse(pluginJSON)
	if err != nil {
		fail("pluginConfig: the plugin rejects it: %v", err)
	} else if len(cfg.Routes) == 0 {
		fail("pluginConfig lists no routes; the filter would guard nothing")
	}
	for i, r := range cfg.Routes {
		if r.RouteName != "" {
			fail("pluginConfig routes[%d] matches route_name %q: on the inbound side Istio names routes itself; match by path_prefix", i, r.RouteName)
		}
	}
	return &wp, string(pluginJSON), errors.Join(errs...)
}

func TestIstioWasmPlugin(t *testing.T) {
	wp, pluginJSON, err := checkWasmPlugin(readFile(t, wasmPluginFile))
	if err != nil {
		t.Fatalf("%s: %v", wasmPluginFile, err)
	}
	if wp.GetPhase() != extensionsv1alpha1.PluginPhase_UNSPECIFIED_PHASE {
		t.Errorf("phase %v; the manifest explains UNSPECIFIED_PHASE", wp.GetPhase())
	}
	assertSameJSON(t, pluginJSON, string(readFile(t, "plugin-config/paths.json")), "the WasmPlugin's pluginConfig vs plugin-config/paths.json")
}

func TestIstioWasmPluginBrokenVariants(t *testing.T) {
	good := string(readFile(t, wasmPluginFile))
	cases := []struct {
		name, old, new, wantErr string
	}{
		{"typo in a field name", "failStrategy: FAIL_OPEN", "failStrategi: FAIL_OPEN", `unknown field "failStrategi"`},
		{"Envoy's spelling of the fail strategy", "failStrategy: FAIL_OPEN", "failStrategy: FAIL_CLOSED", "FAIL_CLOSED"},
		{"fail closed", "failStrategy: FAIL_OPEN", "failStrategy: FAIL_CLOSE", "the docs explain FAIL_OPEN"},
		{"plugin key the parser rejects", "- path_prefix: /mcp", "- path: /mcp", `unknown key "path"`},
		{"plugin value the parser rejects", "transport: http", "transport: streamable", "routes[0].transport"},
		{"route names in Istio", "- path_prefix: /mcp", "- route_name: mcp-streamable", "match by path_prefix"},
		{"not an OCI image", "\n  url: oci://", "\n  url: https://", "want oci://"},
		{"malformed image reference", "url: oci://ghcr.io/mcp-resume-guard/mcp-resume-guard:v0.2.0", "url: oci://ghcr.io/MCP Guard:v0.1.0", "url"},
		{"outbound traffic", "mode: SERVER", "mode: CLIENT", "inbound traffic (SERVER)"},
		{"unknown traffic mode", "mode: SERVER", "mode: INBOUND", "INBOUND"},
		{"every port", "    ports:\n    - number: 8080\n", "", "want the MCP port"},
		{"no match", "  match:\n  - mode: SERVER\n    ports:\n    - number: 8080\n", "", "match is empty"},
		{"no selector", "  selector:\n    matchLabels:\n      app: mcp-server\n", "", "selector.matchLabels is empty"},
		{"selector and targetRefs", "spec:\n", "spec:\n  targetRefs:\n  - kind: Service\n    name: mcp\n", "exclusive"},
		{"bad phase", "phase: UNSPECIFIED_PHASE", "phase: ROUTER", "ROUTER"},
		{"no priority", "  priority: -100\n", "", "priority is not set"},
		{"wrong kind", "kind: WasmPlugin", "kind: EnvoyFilter", `kind "EnvoyFilter"`},
		{"wrong apiVersion", "apiVersion: extensions.istio.io/v1alpha1", "apiVersion: networking.istio.io/v1alpha3", "apiVersion"},
		{"typo in the envelope", "metadata:", "metdata:", "metdata"},
		{"no namespace", "  namespace: mcp\n", "", "namespace are required"},
		{"duplicate YAML key", "  imagePullPolicy: IfNotPresent\n", "  imagePullPolicy: IfNotPresent\n  imagePullPolicy: Always\n", "YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", wasmPluginFile, tc.old)
			}
			_, _, err := checkWasmPlugin([]byte(strings.Replace(good, tc.old, tc.new, 1)))
			variants.Check(t, err, tc.wantErr)
		})
	}
}
