package envoy_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	meshv1alpha1 "istio.io/api/mesh/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/mcp-resume-guard/mcp-resume-guard/counters"
)

const (
	proxyStatsFile        = "istio/proxy-stats.yaml"
	proxyConfigAnnotation = "proxy.istio.io/config"
)

// checkProxyStats parses the Deployment patch, decodes its
// proxy.istio.io/config annotation strictly as istio.io/api's ProxyConfig,
// and checks that its proxyStatsMatcher includes every counter the plugin
// defines, under the name Envoy gives it, and none of Envoy's own stats.
func checkProxyStats(yamlText []byte) error {
	js, err := strictJSON(yamlText)
	if err != nil {
		return err
	}
	var patch struct {
		Spec struct {
			Template struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(js, &patch); err != nil {
		return err
	}
	ann, ok := patch.Spec.Template.Metadata.Annotations[proxyConfigAnnotation]
	if !ok {
		return fmt.Errorf("no spec.template.metadata.annotations[%s]", proxyConfigAnnotation)
	}
	pcJSON, err := yaml.YAMLToJSONStrict([]byte(ann))
	if err != nil {
		return fmt.Errorf("%s: %w", proxyConfigAnnotation, err)
	}
	var pc meshv1alpha1.ProxyConfig
	if err := unmarshalStrict(pcJSON, &pc); err != nil {
		return fmt.Errorf("%s: ProxyConfig schema: %w", proxyConfigAnnotation, err)
	}
	m := pc.GetProxyStatsMatcher()
	if m == nil {
		return errors.New("ProxyConfig has no proxyStatsMatcher")
	}
	// Envoy's stats matcher: a prefix, a suffix or a full-match regular
	// expression (RE2, as Go's regexp) on the stat's name.
	var res []*regexp.Regexp
	for _, r := range m.GetInclusionRegexps() {
		re, err := regexp.Compile(`^(?:` + r + `)$`)
		if err != nil {
			return fmt.Errorf("inclusionRegexps %q: %w", r, err)
		}
		res = append(res, re)
	}
	included := func(stat string) bool {
		for _, p := range m.GetInclusionPrefixes() {
			if strings.HasPrefix(stat, p) {
				return true
			}
		}
		for _, s := range m.GetInclusionSuffixes() {
			if strings.HasSuffix(stat, s) {
				return true
			}
		}
		for _, re := range res {
			if re.MatchString(stat) {
				return true
			}
		}
		return false
	}
	var errs []error
	for _, c := range counters.Names() {
		if stat := "wasmcustom." + counters.Prefix + c; !included(stat) {
			errs = append(errs, fmt.Errorf("proxyStatsMatcher leaves out %s: the counter stays invisible", stat))
		}
	}
	for _, own := range []string{"cluster.inbound|8080||.upstream_rq_total", "wasm.envoy.wasm.runtime.v8.active", "http.inbound_0.0.0.0_8080.downstream_rq_total", "server.live"} {
		if included(own) {
			errs = append(errs, fmt.Errorf("proxyStatsMatcher includes Envoy's own %s: keep it to the plugin's counters (every stat included is a Prometheus series per pod)", own))
		}
	}
	return errors.Join(errs...)
}

func TestIstioProxyStats(t *testing.T) {
	good := string(readFile(t, proxyStatsFile))
	if err := checkProxyStats([]byte(good)); err != nil {
		t.Fatalf("%s: %v", proxyStatsFile, err)
	}
	const re = `            - ".*mcp_resume_guard_.*"`
	for _, tc := range []struct{ name, old, new, want string }{
		{"prefix without Envoy's namespace", re, `            - "mcp_resume_guard_"`, "leaves out wasmcustom.mcp_resume_guard_events_tagged_total"},
		{"regexp that is not a full match", re, `            - "mcp_resume_guard_"`, "leaves out"},
		{"everything", re, `            - ".*"`, "includes Envoy's own"},
		{"misspelt field", "proxyStatsMatcher:", "proxyStatMatcher:", "ProxyConfig schema"},
		{"wrong annotation", proxyConfigAnnotation + ":", "proxy.istio.io/configs:", "no spec.template.metadata.annotations"},
		{"bad regexp", re, `            - "(mcp_resume_guard_"`, "inclusionRegexps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(good, tc.old) {
				t.Fatalf("%s no longer contains %q; update this variant", proxyStatsFile, tc.old)
			}
			bad := strings.Replace(good, tc.old, tc.new, 1)
			if tc.name == "prefix without Envoy's namespace" {
				bad = strings.Replace(bad, "inclusionRegexps:", "inclusionPrefixes:", 1)
			}
			err := checkProxyStats([]byte(bad))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error containing %q", err, tc.want)
			}
		})
	}
}
