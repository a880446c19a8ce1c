// Package monitoring holds what operators run beside mcp-resume-guard to see
// that it works: Prometheus alerting rules (alerts.yaml) and a Grafana
// dashboard (dashboard.json) over the counters the plugin defines, and
// alerts for the guard's absence (a plugin that never loaded).
//
// It is its own Go module so that the Prometheus and Grafana libraries its
// tests use to validate those files stay out of the plugin's module. The
// tests (make test runs them) load alerts.yaml with Prometheus's rule file
// parser, parse every PromQL expression of the rules and of the dashboard's
// panels with Prometheus's PromQL parser, decode the dashboard strictly with
// Grafana's schema types, and check every metric named against package
// counters, the plugin's single list of its counters, or the few metrics of
// Envoy and Istio the rules use to see the guard missing (Wasm load
// failures; each cited in alerts.yaml). They also evaluate
// every alert with Prometheus's query engine over simulated scrapes of one
// Envoy, to see each fire on its condition and stay quiet otherwise, and
// read the trial proxy's /stats/prometheus with Prometheus's own text
// parser (the product module's tests read it with internal/promtext).
package monitoring
