// Package envoyconf reads from an Envoy bootstrap (envoy/envoy.yaml) what a
// proxy needs to treat requests as that Envoy would: the mcp-resume-guard
// Wasm filter's plugin configuration, the route table (the names the plugin
// reads as xds.route_name, in Envoy's match order) with the routes that run
// the filter, and the upstream cluster's connect timeout.
//
// It reads the YAML without Envoy's API types, and refuses what it cannot
// reproduce (route matching on headers or regexes, several listeners or
// virtual hosts) rather than guess. The strict check of the file against
// Envoy's API lives in envoy/'s tests.
package envoyconf

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Type URLs of the messages this package looks for.
const (
	hcmType         = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
	wasmType        = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm"
	filterCfgType   = "type.googleapis.com/envoy.config.route.v3.FilterConfig"
	stringValueType = "type.googleapis.com/google.protobuf.StringValue"
)

// DefaultConnectTimeout is Envoy's cluster connect_timeout when none is set.
const DefaultConnectTimeout = 5 * time.Second

// Bootstrap is what a proxy takes from an Envoy bootstrap.
type Bootstrap struct {
	// PluginConfig is the Wasm filter's config.configuration value (the
	// JSON text handed to proxy_on_configure).
	PluginConfig []byte
	// RootID is the Wasm filter's config.root_id.
	RootID string
	// Routes are the virtual host's routes, in the order Envoy tries them.
	Routes []Route
	// ConnectTimeout is the connect_timeout of the cluster the filtered
	// routes send to.
	ConnectTimeout time.Duration
	// StreamIdleTimeout is the HTTP connection manager's
	// stream_idle_timeout (Envoy's default 5 minutes when unset; 0
	// disables it). Routes' own idle_timeout are not read.
	StreamIdleTimeout time.Duration
}

// DefaultStreamIdleTimeout is Envoy's stream_idle_timeout when none is set.
const DefaultStreamIdleTimeout = 5 * time.Minute

// Route is one route of the table.
type Route struct {
	// Name is the route's name, which the plugin reads as xds.route_name.
	Name string
	// Path is an exact path match ("path:"), compared without the query.
	Path string
	// Prefix is a path prefix match ("prefix:").
	Prefix string
	// Filter reports whether the Wasm filter runs on the route.
	Filter bool
	// Cluster is the route's upstream cluster.
	Cluster string
	// Timeout is the route's timeout for the whole upstream exchange
	// (Envoy's default 15s when unset; 0 disables it).
	Timeout time.Duration
}

// DefaultRouteTimeout is Envoy's route timeout when a route sets none.
const DefaultRouteTimeout = 15 * time.Second

// Matches reports whether the route matches a request path (without the
// query string), as Envoy's case-sensitive path and prefix matchers do.
func (r Route) Matches(path string) bool {
	if r.Path != "" {
		return path == r.Path
	}
	return strings.HasPrefix(path, r.Prefix)
}

// Pattern returns the route's matcher for humans: "/mcp" or "/*".
func (r Route) Pattern() string {
	if r.Path != "" {
		return r.Path
	}
	return r.Prefix + "*"
}

// Match returns the first route that matches path, as Envoy picks it.
func (b *Bootstrap) Match(path string) (Route, bool) {
	for _, r := range b.Routes {
		if r.Matches(path) {
			return r, true
		}
	}
	return Route{}, false
}

// The subset of the bootstrap this package reads.
type (
	bootstrap struct {
		StaticResources struct {
			Listeners []struct {
				Name         string `json:"name"`
				FilterChains []struct {
					Filters []typed `json:"filters"`
				} `json:"filter_chains"`
			} `json:"listeners"`
			Clusters []struct {
				Name           string `json:"name"`
				ConnectTimeout string `json:"connect_timeout"`
			} `json:"clusters"`
		} `json:"static_resources"`
	}
	typed struct {
		Name        string          `json:"name"`
		Disabled    bool            `json:"disabled"`
		TypedConfig json.RawMessage `json:"typed_config"`
	}
	anyType struct {
		Type string `json:"@type"`
	}
	hcm struct {
		RouteConfig *struct {
			VirtualHosts []struct {
				Name                 string                     `json:"name"`
				Routes               []route                    `json:"routes"`
				TypedPerFilterConfig map[string]json.RawMessage `json:"typed_per_filter_config"`
			} `json:"virtual_hosts"`
		} `json:"route_config"`
		RDS               json.RawMessage `json:"rds"`
		HTTPFilters       []typed         `json:"http_filters"`
		StreamIdleTimeout string          `json:"stream_idle_timeout"`
	}
	route struct {
		Name  string `json:"name"`
		Match struct {
			Path          *string         `json:"path"`
			Prefix        *string         `json:"prefix"`
			CaseSensitive *bool           `json:"case_sensitive"`
			Other         json.RawMessage `json:"safe_regex"`
			Sep           json.RawMessage `json:"path_separated_prefix"`
			Template      json.RawMessage `json:"path_match_policy"`
			Headers       json.RawMessage `json:"headers"`
			Query         json.RawMessage `json:"query_parameters"`
		} `json:"match"`
		Route *struct {
			Cluster string  `json:"cluster"`
			Timeout *string `json:"timeout"`
		} `json:"route"`
		TypedPerFilterConfig map[string]json.RawMessage `json:"typed_per_filter_config"`
	}
	wasm struct {
		Config struct {
			RootID        string `json:"root_id"`
			Configuration *struct {
				Type  string `json:"@type"`
				Value string `json:"value"`
			} `json:"configuration"`
		} `json:"config"`
	}
	filterConfig struct {
		Type     string          `json:"@type"`
		Disabled bool            `json:"disabled"`
		Config   json.RawMessage `json:"config"`
	}
)

// Parse reads an Envoy bootstrap in YAML (or JSON). It expects exactly one
// HTTP connection manager with an inline route_config of one virtual host,
// and exactly one Wasm filter in it.
func Parse(yamlText []byte) (*Bootstrap, error) {
	js, err := yaml.YAMLToJSON(yamlText)
	if err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	var bs bootstrap
	if err := json.Unmarshal(js, &bs); err != nil {
		return nil, fmt.Errorf("not an Envoy bootstrap: %w", err)
	}
	var hcms []hcm
	for _, l := range bs.StaticResources.Listeners {
		for _, fc := range l.FilterChains {
			for _, f := range fc.Filters {
				if typeOf(f.TypedConfig) != hcmType {
					continue
				}
				var h hcm
				if err := json.Unmarshal(f.TypedConfig, &h); err != nil {
					return nil, fmt.Errorf("listener %s: http_connection_manager: %w", l.Name, err)
				}
				hcms = append(hcms, h)
			}
		}
	}
	if len(hcms) != 1 {
		return nil, fmt.Errorf("found %d HTTP connection managers in static_resources.listeners; want exactly one", len(hcms))
	}
	h := hcms[0]

	var out Bootstrap
	filterName, defaultOn, err := out.readWasm(h.HTTPFilters)
	if err != nil {
		return nil, err
	}
	out.StreamIdleTimeout = DefaultStreamIdleTimeout
	if h.StreamIdleTimeout != "" {
		if out.StreamIdleTimeout, err = parseDuration(h.StreamIdleTimeout); err != nil {
			return nil, fmt.Errorf("http_connection_manager: stream_idle_timeout: %w", err)
		}
	}
	if h.RouteConfig == nil {
		return nil, errors.New("the HTTP connection manager has no inline route_config (rds is not supported)")
	}
	if n := len(h.RouteConfig.VirtualHosts); n != 1 {
		return nil, fmt.Errorf("route_config has %d virtual hosts; want exactly one", n)
	}
	vh := h.RouteConfig.VirtualHosts[0]
	vhOn, err := enabled(vh.TypedPerFilterConfig[filterName], defaultOn)
	if err != nil {
		return nil, fmt.Errorf("virtual host %s: typed_per_filter_config %s: %w", vh.Name, filterName, err)
	}
	for i, r := range vh.Routes {
		rt, err := readRoute(r, filterName, vhOn)
		if err != nil {
			name := r.Name
			if name == "" {
				name = "#" + strconv.Itoa(i)
			}
			return nil, fmt.Errorf("route %s: %w", name, err)
		}
		out.Routes = append(out.Routes, rt)
	}

	out.ConnectTimeout = DefaultConnectTimeout
	cluster := ""
	for _, r := range out.Routes {
		if r.Filter {
			cluster = r.Cluster
			break
		}
	}
	for _, c := range bs.StaticResources.Clusters {
		if c.Name != cluster || c.ConnectTimeout == "" {
			continue
		}
		d, err := parseDuration(c.ConnectTimeout)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: connect_timeout: %w", c.Name, err)
		}
		out.ConnectTimeout = d
	}
	return &out, nil
}

// readWasm finds the Wasm filter in http_filters and keeps its plugin
// configuration. It returns the filter's name (the key of per-route
// configuration) and whether it runs where no route says otherwise.
func (b *Bootstrap) readWasm(filters []typed) (string, bool, error) {
	var found []typed
	for _, f := range filters {
		if typeOf(f.TypedConfig) == wasmType {
			found = append(found, f)
		}
	}
	if len(found) != 1 {
		return "", false, fmt.Errorf("found %d Wasm filters (%s) in http_filters; want exactly one", len(found), wasmType)
	}
	f := found[0]
	var w wasm
	if err := json.Unmarshal(f.TypedConfig, &w); err != nil {
		return "", false, fmt.Errorf("http filter %s: %w", f.Name, err)
	}
	c := w.Config.Configuration
	if c == nil {
		return "", false, fmt.Errorf("http filter %s: no config.configuration: the plugin needs its routes", f.Name)
	}
	if c.Type != stringValueType {
		return "", false, fmt.Errorf("http filter %s: config.configuration is a %q; want %s", f.Name, c.Type, stringValueType)
	}
	b.PluginConfig = []byte(c.Value)
	b.RootID = w.Config.RootID
	return f.Name, !f.Disabled, nil
}

func readRoute(r route, filterName string, inherited bool) (Route, error) {
	m := r.Match
	switch {
	case m.Other != nil, m.Sep != nil, m.Template != nil:
		return Route{}, errors.New("matches by regex, separated prefix or template; only path and prefix are supported")
	case m.Headers != nil, m.Query != nil:
		return Route{}, errors.New("matches on headers or query parameters, which this reader cannot reproduce")
	case m.CaseSensitive != nil && !*m.CaseSensitive:
		return Route{}, errors.New("case_sensitive: false is not supported")
	case (m.Path == nil) == (m.Prefix == nil):
		return Route{}, errors.New("want exactly one of match.path and match.prefix")
	}
	out := Route{Name: r.Name}
	if m.Path != nil {
		out.Path = *m.Path
	} else {
		out.Prefix = *m.Prefix
	}
	out.Timeout = DefaultRouteTimeout
	if r.Route != nil {
		out.Cluster = r.Route.Cluster
		if t := r.Route.Timeout; t != nil {
			d, err := parseDuration(*t)
			if err != nil {
				return Route{}, fmt.Errorf("route.timeout: %w", err)
			}
			out.Timeout = d
		}
	}
	on, err := enabled(r.TypedPerFilterConfig[filterName], inherited)
	if err != nil {
		return Route{}, fmt.Errorf("typed_per_filter_config %s: %w", filterName, err)
	}
	out.Filter = on
	return out, nil
}

// enabled applies a per-route FilterConfig to the inherited state: a
// FilterConfig without disabled enables the filter (Envoy requires its
// config to be present), disabled: true turns it off.
func enabled(raw json.RawMessage, inherited bool) (bool, error) {
	if raw == nil {
		return inherited, nil
	}
	var fc filterConfig
	if err := json.Unmarshal(raw, &fc); err != nil {
		return false, err
	}
	if fc.Type != filterCfgType {
		return false, fmt.Errorf("@type %q: the Wasm filter has no per-route configuration; want %s", fc.Type, filterCfgType)
	}
	if fc.Disabled {
		return false, nil
	}
	if fc.Config == nil {
		return false, errors.New("a FilterConfig that enables the filter needs config (e.g. config: {})")
	}
	return true, nil
}

func typeOf(raw json.RawMessage) string {
	var a anyType
	_ = json.Unmarshal(raw, &a)
	return a.Type
}

// parseDuration reads a protobuf Duration in its JSON form ("5s", "0.25s").
func parseDuration(s string) (time.Duration, error) {
	if !strings.HasSuffix(s, "s") {
		return 0, fmt.Errorf("%q: want seconds with an s suffix, e.g. 5s", s)
	}
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "s"), 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q: want seconds with an s suffix, e.g. 5s", s)
	}
	return time.Duration(f * float64(time.Second)), nil
}
