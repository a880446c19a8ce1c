package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"go.yaml.in/yaml/v4"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/envoyconf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/yamlpos"
)

// finding is one error (or warning) at a place of the file.
type finding struct {
	at      yamlpos.Pos
	warning bool
	msg     string
}

// target is one deployment of the plugin found in a file (a plugin
// configuration, a bootstrap's Wasm filter, a WasmPlugin, a policy's Wasm
// entry) with what the checks found.
type target struct {
	where    string
	findings []finding
}

func (t *target) fail(at yamlpos.Pos, format string, args ...any) {
	t.findings = append(t.findings, finding{at: at, msg: fmt.Sprintf(format, args...)})
}

func (t *target) warn(at yamlpos.Pos, format string, args ...any) {
	t.findings = append(t.findings, finding{at: at, warning: true, msg: fmt.Sprintf(format, args...)})
}

// objectName is a manifest's namespace/name.
func objectName(doc *yaml.Node) string {
	n := yamlpos.Value(doc, "metadata", "name")
	ns := yamlpos.Value(doc, "metadata", "namespace")
	s := ""
	if n != nil {
		s = n.Value
	}
	if ns != nil && ns.Value != "" {
		return ns.Value + "/" + s
	}
	return s
}

// checkBootstrap checks every Wasm filter of the guard in an Envoy
// bootstrap: failure_policy, the plugin configuration, its routes against
// the route table.
func checkBootstrap(doc *yaml.Node, src []byte) ([]target, error) {
	ls, err := envoyconf.Read(doc, src)
	if err != nil {
		return []target{{where: "Envoy bootstrap", findings: []finding{{at: yamlpos.At(doc), msg: err.Error()}}}}, nil
	}
	var out []target
	for _, l := range ls {
		if errors.Is(l.Err(), envoyconf.ErrNoPlugin) {
			continue
		}
		t := target{where: strings.TrimSpace("Envoy bootstrap " + l.Where)}
		if l.PluginConfig == nil {
			t.fail(yamlpos.At(doc), "%v", l.Err())
			out = append(out, t)
			continue
		}
		if !l.FailOpen {
			what := "failure_policy " + l.FailurePolicy
			if l.FailurePolicy == "" {
				what = "failure_policy is not set, and Envoy's default FAIL_CLOSED"
			}
			t.fail(l.FailurePolicyAt, "%s answers 503 to every guarded request when the plugin's VM fails: set failure_policy: FAIL_OPEN, so requests flow unguarded, as before the guard (envoy/envoy.yaml says why)", what)
		}
		p := jsonPlugin(l.PluginConfigText)
		fs, cfg := p.check()
		t.findings = append(t.findings, fs...)
		switch {
		case cfg == nil:
		case l.TableErr != nil:
			t.warn(p.at, "the plugin's routes were not checked against the route table: %v", l.TableErr)
		default:
			for _, f := range envoyconf.CrossCheck(cfg, l.Routes, false) {
				at := yamlpos.Pos{}
				if f.Entry >= 0 {
					at = p.locate([]string{"routes", strconv.Itoa(f.Entry), f.Key}, false)
				} else if f.Route != nil {
					at = f.Route.At
				}
				prefix := ""
				if f.Entry >= 0 {
					prefix = "routes[" + strconv.Itoa(f.Entry) + "]." + f.Key + ": "
				}
				t.findings = append(t.findings, finding{at: at, warning: f.Warning, msg: prefix + f.Msg})
			}
		}
		if l.Err() != nil && l.Err() != l.TableErr {
			t.fail(p.at, "%v", l.Err())
		}
		out = append(out, t)
	}
	return out, nil
}

// checkWasmPlugin checks an Istio WasmPlugin: where it runs (selector or
// targetRefs), the image and its digest, failStrategy, phase, type, and
// the plugin configuration.
func checkWasmPlugin(doc *yaml.Node, img *image) target {
	t := target{where: "WasmPlugin " + objectName(doc)}
	specKey, spec := yamlpos.Get(doc, "spec")
	if spec == nil || spec.Kind != yaml.MappingNode {
		t.fail(yamlpos.At(doc), "spec is missing or not a mapping")
		return t
	}
	at := func(key string) yamlpos.Pos {
		if k, _ := yamlpos.Get(spec, key); k != nil {
			return yamlpos.At(k)
		}
		return yamlpos.At(specKey)
	}

	sel, refs, ref := yamlpos.Value(spec, "selector"), yamlpos.Value(spec, "targetRefs"), yamlpos.Value(spec, "targetRef")
	switch {
	case sel == nil && refs == nil && ref == nil:
		t.fail(at("spec"), "spec has neither selector nor targetRefs: the plugin runs in every workload of the namespace (of the mesh, in Istio's root namespace)")
	case sel != nil && (refs != nil || ref != nil):
		t.fail(at("selector"), "selector and targetRefs exclude each other: keep one")
	case sel != nil:
		if ml := yamlpos.Value(sel, "matchLabels"); ml == nil || len(ml.Content) == 0 {
			t.fail(at("selector"), "selector.matchLabels is empty: the plugin runs in every workload of the namespace")
		}
	case refs != nil && len(refs.Content) == 0:
		t.fail(at("targetRefs"), "targetRefs is empty: the plugin attaches to nothing")
	}

	checkImageURL(&t, spec, "url", "sha256", img, true)

	switch fk, fv := yamlpos.Get(spec, "failStrategy"); {
	case fv == nil:
		t.fail(at("spec"), "failStrategy is not set, and Istio's default FAIL_CLOSE answers 5xx to every request of the workload when the plugin fails (an image that fails to pull): set failStrategy: FAIL_OPEN")
	case fv.Value == "FAIL_OPEN":
	case fv.Value == "FAIL_CLOSE", fv.Value == "FAIL_RELOAD":
		t.fail(yamlpos.At(fk), "failStrategy %s answers 5xx to every MCP request when the plugin fails (FAIL_RELOAD too, for anything but a runtime error): a resume guard must not turn a rare lost result into an outage; set failStrategy: FAIL_OPEN", fv.Value)
	case fv.Value == "FAIL_CLOSED":
		t.fail(yamlpos.At(fk), "failStrategy FAIL_CLOSED is Envoy's spelling, not one of Istio's (FAIL_OPEN, FAIL_CLOSE, FAIL_RELOAD): the API server refuses the manifest; set failStrategy: FAIL_OPEN")
	default:
		t.fail(yamlpos.At(fk), "failStrategy %s is not one of FAIL_OPEN, FAIL_CLOSE, FAIL_RELOAD; set FAIL_OPEN", yamlpos.Describe(fv))
	}

	switch pk, pv := yamlpos.Get(spec, "phase"); {
	case pv == nil, pv.Value == "UNSPECIFIED_PHASE":
	case pv.Value == "AUTHN", pv.Value == "AUTHZ", pv.Value == "STATS":
		t.warn(yamlpos.At(pk), "phase %s puts the guard before Istio's %s filter (UNSPECIFIED_PHASE puts it after authentication and authorization, next to the router, first to see the upstream's SSE bytes: envoy/istio/wasmplugin.yaml says why)", pv.Value, map[string]string{"AUTHN": "authentication", "AUTHZ": "authorization", "STATS": "stats"}[pv.Value])
	default:
		t.fail(yamlpos.At(pk), "phase %s is not one of UNSPECIFIED_PHASE, AUTHN, AUTHZ, STATS; the guard belongs in UNSPECIFIED_PHASE", yamlpos.Describe(pv))
	}

	if tk, tv := yamlpos.Get(spec, "type"); tv != nil && tv.Value != "HTTP" {
		t.fail(yamlpos.At(tk), "type %s: the guard is an HTTP filter (type: HTTP)", yamlpos.Describe(tv))
	}

	ck, cv := yamlpos.Get(spec, "pluginConfig")
	if cv == nil {
		t.fail(at("spec"), "spec.pluginConfig is missing: the plugin guards no request (envoy/plugin-config/paths.json is one to start from)")
		return t
	}
	t.checkManifestPlugin(ck, cv, false, "on the inbound side Istio names routes itself, so the entry never matches; match by path_prefix")
	return t
}

// checkExtensionPolicy checks an Envoy Gateway EnvoyExtensionPolicy's
// targets and each of its Wasm entries that runs the guard: the code and
// its digest, failOpen, the plugin configuration. No entry of the guard:
// nil (the caller notes the document as skipped).
func checkExtensionPolicy(doc *yaml.Node, img *image) []target {
	base := "EnvoyExtensionPolicy " + objectName(doc)
	specKey, spec := yamlpos.Get(doc, "spec")
	wasm := yamlpos.Value(spec, "wasm")
	if wasm == nil || wasm.Kind != yaml.SequenceNode {
		return nil
	}
	var ours []int
	for i, e := range wasm.Content {
		u := yamlpos.Value(e, "code", "image", "url")
		if len(wasm.Content) == 1 || scalarIs(yamlpos.Value(e, "name"), envoyconf.PluginName) || scalarIs(yamlpos.Value(e, "rootID"), envoyconf.PluginName) ||
			(u != nil && strings.Contains(u.Value, envoyconf.PluginName)) {
			ours = append(ours, i)
		}
	}
	var out []target
	for _, i := range ours {
		e := wasm.Content[i]
		t := target{where: fmt.Sprintf("%s spec.wasm[%d]", base, i)}
		if i == ours[0] && yamlpos.Value(spec, "targetRefs") == nil && yamlpos.Value(spec, "targetRef") == nil && yamlpos.Value(spec, "targetSelectors") == nil {
			t.fail(yamlpos.At(specKey), "spec has no targetRefs: the policy attaches to no route, the guard never runs")
		} else if r := yamlpos.Value(spec, "targetRefs"); i == ours[0] && r != nil && len(r.Content) == 0 {
			t.fail(yamlpos.At(r), "targetRefs is empty: the policy attaches to no route, the guard never runs")
		}
		entryAt := yamlpos.At(e)
		if e.Kind != yaml.MappingNode {
			t.fail(entryAt, "spec.wasm[%d] is %s, not a mapping", i, yamlpos.Describe(e))
			out = append(out, t)
			continue
		}
		code := yamlpos.Value(e, "code")
		switch ty := yamlpos.Value(code, "type"); {
		case ty == nil:
			t.fail(entryAt, "code.type is missing: Image (the OCI image make oci builds) or HTTP")
		case ty.Value == "Image":
			if src := yamlpos.Value(code, "image"); src == nil {
				t.fail(yamlpos.At(ty), "code.type Image needs code.image")
			} else {
				checkImageURL(&t, src, "url", "sha256", img, false)
			}
		case ty.Value == "HTTP":
			if src := yamlpos.Value(code, "http"); src == nil {
				t.fail(yamlpos.At(ty), "code.type HTTP needs code.http")
			} else {
				checkHTTPURL(&t, src, img)
			}
		default:
			t.fail(yamlpos.At(ty), "code.type %s: want Image or HTTP", yamlpos.Describe(ty))
		}
		switch fk, fv := yamlpos.Get(e, "failOpen"); {
		case fv == nil:
			t.fail(entryAt, "failOpen is not set, and Envoy Gateway's default (false) fails every request of the route when the plugin fails: set failOpen: true, so requests flow unguarded, as before the guard")
		case fv.Value != "true":
			t.fail(yamlpos.At(fk), "failOpen %s fails every request of the route when the plugin fails: set failOpen: true", yamlpos.Describe(fv))
		}
		ck, cv := yamlpos.Get(e, "config")
		if cv == nil {
			t.fail(entryAt, "config is missing: the plugin guards no request (envoy/plugin-config/paths.json is one to start from)")
			out = append(out, t)
			continue
		}
		t.checkManifestPlugin(ck, cv, true, "Envoy Gateway names routes itself (httproute/NAMESPACE/NAME/rule/N/match/M/…); match by path_prefix unless you copied that name")
		out = append(out, t)
	}
	return out
}

func scalarIs(n *yaml.Node, v string) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Value == v
}

// checkManifestPlugin checks a plugin configuration written as YAML in a
// manifest (key: value), as the API server hands it on: JSON. An entry that
// matches a route_name is an error (a warning with warnOnly), for why.
func (t *target) checkManifestPlugin(key, value *yaml.Node, warnOnly bool, why string) {
	js, err := yamlpos.ToJSON(value)
	if err != nil {
		t.fail(yamlpos.At(key), "%s: %v", key.Value, err)
		return
	}
	p := &plugin{js: js, at: yamlpos.At(key), root: value}
	fs, cfg := p.check()
	t.findings = append(t.findings, fs...)
	if cfg == nil {
		return
	}
	for i, r := range cfg.Routes {
		if r.RouteName == "" {
			continue
		}
		f := finding{at: p.locate([]string{"routes", strconv.Itoa(i), "route_name"}, false), warning: warnOnly,
			msg: fmt.Sprintf("routes[%d].route_name %q: %s", i, r.RouteName, why)}
		t.findings = append(t.findings, f)
	}
}

// checkDigestField checks a sha256 field: a string (YAML reads 000… as a
// number) of 64 lowercase hex digits; it returns the digest, "" when unset
// or wrong.
func checkDigestField(t *target, src *yaml.Node, field string) (string, yamlpos.Pos) {
	k, v := yamlpos.Get(src, field)
	if v == nil {
		return "", yamlpos.Pos{}
	}
	at := yamlpos.At(k)
	switch {
	case !yamlpos.IsString(v):
		t.fail(at, "%s is %s in YAML, not a string: quote it (%s: \"%s\")", field, yamlpos.Describe(v), field, v.Value)
	case v.Value == "":
		return "", yamlpos.Pos{}
	case strings.HasPrefix(v.Value, "sha256:"):
		t.fail(at, "%s %q: write the 64 hex digits without the sha256: prefix", field, v.Value)
	case !sha256Hex.MatchString(v.Value):
		t.fail(at, "%s %q is not a SHA-256 digest: want 64 lowercase hex digits, got %d characters", field, v.Value, len(v.Value))
	default:
		return v.Value, at
	}
	return "", yamlpos.Pos{}
}

// checkImageURL checks an OCI image reference (an Istio url, an Envoy
// Gateway code.image.url) and the digest that pins it: the manifest's,
// compared with the built image (img.compare). istio: the url may
// carry a scheme (oci://, the default; file://, http(s)://).
func checkImageURL(t *target, src *yaml.Node, urlField, shaField string, img *image, istio bool) {
	uk, uv := yamlpos.Get(src, urlField)
	if uv == nil || !yamlpos.IsString(uv) || uv.Value == "" {
		t.fail(yamlpos.At(src), "%s is missing: the image to pull (REGISTRY/IMAGE:TAG, pinned @sha256:DIGEST)", urlField)
		return
	}
	uat := yamlpos.At(uk)
	ref := uv.Value
	if istio {
		scheme, rest, ok := strings.Cut(ref, "://")
		switch {
		case !ok:
		case scheme == "oci":
			ref = rest
		case scheme == "http" || scheme == "https":
			checkHTTPURL(t, src, img)
			return
		case scheme == "file":
			return // a module inside the proxy's container: nothing to pin
		default:
			t.fail(uat, "%s %q: the scheme must be oci://, http(s):// or file://", urlField, uv.Value)
			return
		}
	} else {
		ref = strings.TrimPrefix(ref, "oci://")
	}
	urlDigest := ""
	if _, d, ok := strings.Cut(ref, "@"); ok {
		alg, hexd, _ := strings.Cut(d, ":")
		if alg != "sha256" || !sha256Hex.MatchString(hexd) {
			t.fail(uat, "%s %q: the digest after @ must be sha256: and 64 lowercase hex digits, got %q (%d digits)", urlField, uv.Value, d, len(hexd))
			return
		}
		urlDigest = hexd
	}
	if _, err := name.ParseReference(ref, name.StrictValidation); err != nil {
		t.fail(uat, "%s %q is not an image reference: %v", urlField, uv.Value, err)
		return
	}
	shaDigest, shaAt := checkDigestField(t, src, shaField)
	if urlDigest != "" && shaDigest != "" && urlDigest != shaDigest {
		t.fail(shaAt, "%s differs from the digest the %s pins (@sha256:%s): the pull fails", shaField, urlField, urlDigest)
	}
	for _, d := range []struct {
		digest, field string
		at            yamlpos.Pos
	}{{urlDigest, urlField, uat}, {shaDigest, shaField, shaAt}} {
		if d.digest == "" {
			continue
		}
		if msg, warning := img.compare(d.digest, manifestDigest); warning {
			t.warn(d.at, "%s's digest %s %s", d.field, d.digest, msg)
		} else if msg != "" {
			t.fail(d.at, "%s's digest %s %s", d.field, d.digest, msg)
		}
	}
	if urlDigest == "" && shaDigest == "" && len(t.findings) == 0 {
		t.warn(uat, "%s %q is pinned by tag only: pin the image's manifest digest (%s …@sha256:DIGEST or %s: DIGEST; the release notes or crane digest give it, not the .wasm file's SHA-256)", urlField, uv.Value, urlField, shaField)
	}
}

// checkHTTPURL checks a .wasm served over http(s) and its sha256: the
// file's own digest.
func checkHTTPURL(t *target, src *yaml.Node, img *image) {
	uk, uv := yamlpos.Get(src, "url")
	if uv == nil || !(strings.HasPrefix(uv.Value, "http://") || strings.HasPrefix(uv.Value, "https://")) {
		t.fail(yamlpos.At(src), "url is missing or not http(s)://: the .wasm file to fetch")
		return
	}
	d, at := checkDigestField(t, src, "sha256")
	if d == "" {
		t.warn(yamlpos.At(uk), "url %q has no sha256: the proxy runs whatever the server returns; set sha256 to the .wasm file's SHA-256 (the release's .sha256)", uv.Value)
		return
	}
	if msg, warning := img.compare(d, wasmDigest); warning {
		t.warn(at, "sha256 %s %s", d, msg)
	} else if msg != "" {
		t.fail(at, "sha256 %s %s", d, msg)
	}
}
