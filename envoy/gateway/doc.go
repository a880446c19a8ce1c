// Package gateway holds the Envoy Gateway deployment of mcp-resume-guard
// (httproute.yaml, extensionpolicy.yaml, backendtrafficpolicy.yaml) and,
// in its tests, their validation against Envoy Gateway's and Gateway API's
// own types and CRD schemas (structural schema, defaults and CEL rules, as
// the Kubernetes API server runs them) and against the plugin's own
// configuration parser.
//
// It is a module of its own so that the Kubernetes libraries the validation
// needs stay out of the plugin's module; make test runs it.
package gateway
