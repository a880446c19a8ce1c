package envoy_test

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	wasmfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/wasm/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	wasmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/wasm/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	// Every type an Any in envoy.yaml names must be linked in, or the strict
	// unmarshal fails on it. The ones not imported above by name:
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/stream/v3"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// The facts envoy.yaml is held to beyond Envoy's own schema.
const (
	wasmRuntime = "envoy.wasm.runtime.v8"
	adminPort   = 9901
)

// streamingPaths are the routes that carry long-lived SSE streams: Envoy's
// default 15 s route timeout would cut them, so they must set timeout 0s.
var streamingPaths = []string{"/mcp", "/sse"}

// transportOfPath is the MCP transport each endpoint path speaks.
var transportOfPath = map[string]cursor.Transport{
	"/mcp":       cursor.TransportHTTP,
	"/sse":       cursor.TransportSSE,
	"/messages":  cursor.TransportSSE,
	"/message":   cursor.TransportSSE, // the TypeScript SDK's SSEServerTransport
	"/messages/": cursor.TransportSSE, // the Python SDK's SseServerTransport("/messages/")
}

// guardDeployment is what checkBootstrap extracts from a valid bootstrap.
type guardDeployment struct {
	Bootstrap     *bootstrapv3.Bootstrap
	HCM           *hcmv3.HttpConnectionManager
	FilterName    string // the Wasm filter's name in http_filters
	Plugin        *wasmv3.PluginConfig
	PluginJSON    string // the plugin configuration string
	PluginConfig  config.Config
	Routes        map[string]*routev3.Route // by route name
	EnabledRoutes []string                  // routes that enable the Wasm filter, sorted
}

// checkBootstrap parses an Envoy bootstrap in YAML strictly against Envoy's
// API, runs its validation rules, and checks how it deploys the guard. It
// returns every problem it finds.
func checkBootstrap(yamlText []byte) (*guardDeployment, error) {
	js, err := strictJSON(yamlText)
	if err != nil {
		return nil, err
	}
	var b bootstrapv3.Bootstrap
	if err := unmarshalStrict(js, &b); err != nil {
		return nil, fmt.Errorf("Envoy bootstrap schema: %w", err)
	}
	return checkBootstrapProto(&b)
}

// checkBootstrapProto is checkBootstrap after parsing.
func checkBootstrapProto(b *bootstrapv3.Bootstrap) (*guardDeployment, error) {
	if err := validateTree(b); err != nil {
		return nil, fmt.Errorf("Envoy validation rules: %w", err)
	}
	d := &guardDeployment{Bootstrap: b, Routes: map[string]*routev3.Route{}}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if port := b.GetAdmin().GetAddress().GetSocketAddress().GetPortValue(); port != adminPort {
		fail("admin: port %d; the docs and docker-compose read the counters on %d", port, adminPort)
	}

	hcms, err := connectionManagers(b)
	if err != nil {
		return nil, err
	}
	if len(hcms) != 1 {
		return nil, fmt.Errorf("want exactly one HTTP connection manager, found %d", len(hcms))
	}
	d.HCM = hcms[0]
	if t := d.HCM.GetStreamIdleTimeout(); t == nil || t.AsDuration() <= 0 {
		fail("http_connection_manager: stream_idle_timeout must be set and positive (SSE streams need a bound that outlives keep-alives; 0s never frees dead streams)")
	}

	if err := d.checkFilters(); err != nil {
		return nil, err
	}
	d.checkRoutes(b, fail)
	d.checkPluginRoutes(fail)
	return d, errors.Join(errs...)
}

// connectionManagers unpacks every HTTP connection manager of the static
// listeners.
func connectionManagers(b *bootstrapv3.Bootstrap) ([]*hcmv3.HttpConnectionManager, error) {
	var out []*hcmv3.HttpConnectionManager
	for _, l := range b.GetStaticResources().GetListeners() {
		for _, fc := range l.GetFilterChains() {
			for _, f := range fc.GetFilters() {
				var h hcmv3.HttpConnectionManager
				if !f.GetTypedConfig().MessageIs(&h) {
					continue
				}
				if err := f.GetTypedConfig().UnmarshalTo(&h); err != nil {
					return nil, fmt.Errorf("listener %s: %w", l.GetName(), err)
				}
				out = append(out, &h)
			}
		}
	}
	return out, nil
}

// checkFilters finds the Wasm filter and checks the filter chain around it
// and the plugin it loads.
func (d *guardDeployment) checkFilters() error {
	filters := d.HCM.GetHttpFilters()
	wasmAt := -1
	for i, f := range filters {
		if f.GetTypedConfig().MessageIs(&wasmfilterv3.Wasm{}) {
			if wasmAt >= 0 {
				return errors.New("http_filters: the Wasm filter is declared twice; declare it once and enable it per route")
			}
			wasmAt = i
		}
	}
	if wasmAt < 0 {
		return errors.New("http_filters: no envoy.extensions.filters.http.wasm.v3.Wasm filter")
	}
	if last := filters[len(filters)-1]; !last.GetTypedConfig().MessageIs(&routerv3.Router{}) {
		return fmt.Errorf("http_filters: the last filter is %q; the router must be last (filters after it never run)", last.GetName())
	}
	wf := filters[wasmAt]
	d.FilterName = wf.GetName()
	if !wf.GetDisabled() {
		return fmt.Errorf("http_filters: %s must be disabled: true, and enabled per route with a FilterConfig", d.FilterName)
	}
	var w wasmfilterv3.Wasm
	if err := wf.GetTypedConfig().UnmarshalTo(&w); err != nil {
		return fmt.Errorf("http_filters: %s: %w", d.FilterName, err)
	}
	d.Plugin = w.GetConfig()
	vm := d.Plugin.GetVmConfig()
	switch {
	case vm == nil:
		return errors.New("wasm: config.vm_config is missing")
	case vm.GetRuntime() != wasmRuntime:
		return fmt.Errorf("wasm: runtime %q; want %s (the runtime of Envoy's release images)", vm.GetRuntime(), wasmRuntime)
	case vm.GetVmId() == "":
		return errors.New("wasm: vm_config.vm_id is empty; name the VM so its shared data (the session watermarks) is this plugin's own")
	case vm.GetCode().GetLocal().GetFilename() == "":
		return errors.New("wasm: vm_config.code.local.filename is empty; the plugin loads from a local file")
	case d.Plugin.GetFailurePolicy() == wasmv3.FailurePolicy_UNSPECIFIED:
		return errors.New("wasm: failure_policy is not set; choose it (the default changed between Envoy releases)")
	}
	var sv wrapperspb.StringValue
	if !d.Plugin.GetConfiguration().MessageIs(&sv) {
		return fmt.Errorf("wasm: configuration is %q; want a google.protobuf.StringValue holding the JSON", d.Plugin.GetConfiguration().GetTypeUrl())
	}
	if err := d.Plugin.GetConfiguration().UnmarshalTo(&sv); err != nil {
		return fmt.Errorf("wasm: configuration: %w", err)
	}
	d.PluginJSON = sv.GetValue()
	cfg, err := config.Parse([]byte(d.PluginJSON))
	if err != nil {
		return fmt.Errorf("wasm: the plugin rejects its configuration: %w", err)
	}
	if len(cfg.Routes) == 0 {
		return errors.New("wasm: the plugin configuration lists no routes; the filter would guard nothing")
	}
	d.PluginConfig = cfg
	return nil
}

// checkRoutes indexes the route table and finds where the filter is enabled.
func (d *guardDeployment) checkRoutes(b *bootstrapv3.Bootstrap, fail func(string, ...any)) {
	rc := d.HCM.GetRouteConfig()
	if rc == nil {
		fail("http_connection_manager: the route table must be inline (route_config) for the route names to be checked")
		return
	}
	clusters := map[string]bool{}
	for _, c := range b.GetStaticResources().GetClusters() {
		clusters[c.GetName()] = true
	}
	for _, vh := range rc.GetVirtualHosts() {
		for _, r := range vh.GetRoutes() {
			name := r.GetName()
			if _, dup := d.Routes[name]; dup {
				fail("route name %q is used twice; the plugin tells routes apart by name", name)
			}
			d.Routes[name] = r
			if c := r.GetRoute().GetCluster(); c != "" && !clusters[c] {
				fail("route %q: cluster %q is not defined", name, c)
			}
			if d.routeEnables(name, r, fail) {
				d.EnabledRoutes = append(d.EnabledRoutes, name)
			}
			if slices.Contains(streamingPaths, r.GetMatch().GetPath()) {
				if t := r.GetRoute().GetTimeout(); t == nil || t.AsDuration() != 0 {
					fail("route %q serves SSE streams: set timeout: 0s (Envoy's default 15 s cuts every stream)", name)
				}
			}
		}
	}
	sort.Strings(d.EnabledRoutes)
}

// routeEnables reports whether route r turns the (disabled by default) Wasm
// filter on.
func (d *guardDeployment) routeEnables(name string, r *routev3.Route, fail func(string, ...any)) bool {
	for key, a := range r.GetTypedPerFilterConfig() {
		if key == d.FilterName {
			continue
		}
		var fc routev3.FilterConfig
		if a.MessageIs(&fc) && strings.Contains(key, "wasm") {
			fail("route %q: typed_per_filter_config key %q names no filter; the Wasm filter is %q", name, key, d.FilterName)
		}
	}
	a, ok := r.GetTypedPerFilterConfig()[d.FilterName]
	if !ok {
		return false
	}
	var fc routev3.FilterConfig
	if !a.MessageIs(&fc) {
		fail("route %q: the per-route config of %s is %q; the Wasm filter has no per-route message, use envoy.config.route.v3.FilterConfig", name, d.FilterName, a.GetTypeUrl())
		return false
	}
	if err := a.UnmarshalTo(&fc); err != nil {
		fail("route %q: %v", name, err)
		return false
	}
	if fc.GetConfig() == nil {
		fail("route %q: FilterConfig without config (Envoy rejects it); use config: {}", name)
		return false
	}
	if fc.GetConfig().GetTypeUrl() != "" {
		fail("route %q: FilterConfig.config is %q; the Wasm filter takes no per-route configuration, use {}", name, fc.GetConfig().GetTypeUrl())
	}
	return !fc.GetDisabled()
}

// checkPluginRoutes compares the plugin's routes with the route table: every
// route name the plugin knows must exist and run the filter, and every route
// that runs the filter must be one the plugin knows (or the filter would
// run there for nothing).
func (d *guardDeployment) checkPluginRoutes(fail func(string, ...any)) {
	if d.PluginConfig.Routes == nil {
		return
	}
	named := map[string]bool{}
	byPath := false
	for _, pr := range d.PluginConfig.Routes {
		if pr.RouteName == "" {
			byPath = true
			continue
		}
		named[pr.RouteName] = true
		r, ok := d.Routes[pr.RouteName]
		switch {
		case !ok:
			fail("the plugin configuration names route %q, which is not in the route table", pr.RouteName)
		case !slices.Contains(d.EnabledRoutes, pr.RouteName):
			fail("the plugin configuration names route %q, but that route does not enable %s", pr.RouteName, d.FilterName)
		default:
			path := r.GetMatch().GetPath()
			if want, known := transportOfPath[path]; known && pr.Transport != want {
				fail("route %q serves %s (transport %v) but the plugin configuration says %v", pr.RouteName, path, want, pr.Transport)
			}
		}
	}
	if byPath {
		return
	}
	for _, name := range d.EnabledRoutes {
		if !named[name] {
			fail("route %q enables %s but the plugin configuration does not name it", name, d.FilterName)
		}
	}
}
