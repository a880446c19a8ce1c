// Package envoyconf reads from an Envoy bootstrap (envoy/envoy.yaml) what a
// proxy needs to treat requests as that Envoy would, and what a check needs
// to tell whether the plugin can guard them: the mcp-resume-guard Wasm
// filter (its plugin configuration, root_id and failure_policy), the route
// table (the names the plugin reads as xds.route_name, in Envoy's match
// order) with the routes that run the filter, the upstream cluster's connect
// timeout, and where each of them is in the file.
//
// It reads the YAML as nodes (go.yaml.in/yaml/v4) without Envoy's API
// types, and refuses what it cannot reproduce (route matching on headers or
// regexes, several virtual hosts, rds) rather than guess. The strict check
// of the file against Envoy's API lives in envoy/'s tests; [CrossCheck]
// holds the plugin's routes against the table (tools/validate and the trial
// proxy's banner both call it).
package envoyconf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/mcp-resume-guard/mcp-resume-guard/config"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/yamlpos"
)

// Type URLs of the messages this package looks for.
const (
	hcmType         = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
	WasmType        = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm"
	filterCfgType   = "type.googleapis.com/envoy.config.route.v3.FilterConfig"
	StringValueType = "type.googleapis.com/google.protobuf.StringValue"
)

// PluginName is the name, root_id and vm_id the shipped manifests give the
// plugin; a bootstrap with several Wasm filters marks the guard's with it.
const PluginName = "mcp-resume-guard"

// DefaultConnectTimeout is Envoy's cluster connect_timeout when none is set.
const DefaultConnectTimeout = 5 * time.Second

// Bootstrap is what a proxy takes from an Envoy bootstrap.
type Bootstrap struct {
	// PluginConfig is the Wasm filter's config.configuration value (the
	// JSON text handed to proxy_on_configure), PluginConfigText where it
	// is in the file.
	PluginConfig     []byte
	PluginConfigText yamlpos.Text
	// RootID is the Wasm filter's config.root_id.
	RootID string
	// FailurePolicy is the Wasm filter's config.failure_policy as written
	// ("" when unset: Envoy's default FAIL_CLOSED), FailurePolicyAt where
	// (or where the filter's config is, when unset).
	FailurePolicy   string
	FailurePolicyAt yamlpos.Pos
	// FailOpen reports whether a VM failure lets requests through
	// unguarded: failure_policy FAIL_OPEN, or the older fail_open: true.
	FailOpen bool
	// Where names the Wasm filter for messages: the listener and the
	// filter's name.
	Where string
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
	// Prefix is a path prefix match ("prefix:"): a byte prefix, so
	// "/mcp" also matches "/mcp-anything".
	Prefix string
	// SeparatedPrefix is a "path_separated_prefix:" match: the prefix
	// followed by nothing or "/", as the plugin's path_prefix matches.
	SeparatedPrefix string
	// Filter reports whether the Wasm filter runs on the route.
	Filter bool
	// Cluster is the route's upstream cluster.
	Cluster string
	// Timeout is the route's timeout for the whole upstream exchange
	// (Envoy's default 15s when unset; 0 disables it).
	Timeout time.Duration
	// At is where the route is in the file.
	At yamlpos.Pos
}

// DefaultRouteTimeout is Envoy's route timeout when a route sets none.
const DefaultRouteTimeout = 15 * time.Second

// Matches reports whether the route matches a request path (without the
// query string), as Envoy's case-sensitive path, prefix and
// path_separated_prefix matchers do.
func (r Route) Matches(path string) bool {
	switch {
	case r.Path != "":
		return path == r.Path
	case r.SeparatedPrefix != "":
		return config.PathHasPrefix(path, r.SeparatedPrefix)
	}
	return strings.HasPrefix(path, r.Prefix)
}

// Pattern returns the route's matcher for humans: "/mcp", "/*" (a byte
// prefix) or "/mcp/*" (path_separated_prefix: /mcp, and /mcp itself).
func (r Route) Pattern() string {
	switch {
	case r.Path != "":
		return r.Path
	case r.SeparatedPrefix != "":
		return r.SeparatedPrefix + "[/*]"
	}
	return r.Prefix + "*"
}

// Match returns the first route that matches path, as Envoy picks it.
func (b *Bootstrap) Match(path string) (Route, bool) {
	return match(b.Routes, path)
}

func match(routes []Route, path string) (Route, bool) {
	for _, r := range routes {
		if r.Matches(path) {
			return r, true
		}
	}
	return Route{}, false
}

// The subset of the bootstrap this package reads.
type (
	listener struct {
		Name         string `yaml:"name"`
		FilterChains []struct {
			Filters []typed `yaml:"filters"`
		} `yaml:"filter_chains"`
	}
	cluster struct {
		Name           string `yaml:"name"`
		ConnectTimeout string `yaml:"connect_timeout"`
	}
	typed struct {
		Name        string    `yaml:"name"`
		Disabled    bool      `yaml:"disabled"`
		TypedConfig yaml.Node `yaml:"typed_config"`
	}
	hcm struct {
		RouteConfig *struct {
			VirtualHosts []struct {
				Name                 string               `yaml:"name"`
				Routes               []yaml.Node          `yaml:"routes"`
				TypedPerFilterConfig map[string]yaml.Node `yaml:"typed_per_filter_config"`
			} `yaml:"virtual_hosts"`
		} `yaml:"route_config"`
		HTTPFilters       []typed `yaml:"http_filters"`
		StreamIdleTimeout string  `yaml:"stream_idle_timeout"`
	}
	route struct {
		Name  string `yaml:"name"`
		Match struct {
			Path          *string   `yaml:"path"`
			Prefix        *string   `yaml:"prefix"`
			Sep           *string   `yaml:"path_separated_prefix"`
			CaseSensitive *bool     `yaml:"case_sensitive"`
			Other         yaml.Node `yaml:"safe_regex"`
			Template      yaml.Node `yaml:"path_match_policy"`
			Headers       yaml.Node `yaml:"headers"`
			Query         yaml.Node `yaml:"query_parameters"`
		} `yaml:"match"`
		Route *struct {
			Cluster string  `yaml:"cluster"`
			Timeout *string `yaml:"timeout"`
		} `yaml:"route"`
		TypedPerFilterConfig map[string]yaml.Node `yaml:"typed_per_filter_config"`
	}
	filterConfig struct {
		Type     string    `yaml:"@type"`
		Disabled bool      `yaml:"disabled"`
		Config   yaml.Node `yaml:"config"`
	}
)

// Parse reads an Envoy bootstrap in YAML (or JSON). It expects exactly one
// HTTP connection manager with an inline route_config of one virtual host,
// and exactly one Wasm filter in it.
func Parse(yamlText []byte) (*Bootstrap, error) {
	docs, err := yamlpos.Documents(yamlText)
	if err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	if len(docs) != 1 || docs[0] == nil || docs[0].Kind != yaml.MappingNode {
		return nil, errors.New("not an Envoy bootstrap: want one YAML document holding a mapping")
	}
	found, err := Read(docs[0], yamlText)
	if err != nil {
		return nil, err
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("found %d HTTP connection managers in static_resources.listeners; want exactly one", len(found))
	}
	if found[0].err != nil {
		return nil, found[0].err
	}
	return found[0].Bootstrap, nil
}

// Listener is what Read finds in one HTTP connection manager: the guard's
// Wasm filter, and the route table when it can be read (TableErr says why
// not).
type Listener struct {
	*Bootstrap
	TableErr error
	err      error // the HTTP connection manager cannot be read at all
}

// Err is why the HTTP connection manager could not be read at all, nil
// when it was.
func (l Listener) Err() error { return l.err }

// Read finds every HTTP connection manager of a bootstrap (the root mapping
// of the file src) and reads each: its Wasm filter (the only one, or the one
// named mcp-resume-guard by its name, root_id, vm_id or code file), its
// route table. A Listener whose Err is set could not be read; one whose
// Bootstrap.PluginConfig is nil has no Wasm filter of the guard.
func Read(root *yaml.Node, src []byte) ([]Listener, error) {
	var ls []listener
	if n := yamlpos.Value(root, "static_resources", "listeners"); n != nil {
		if err := n.Decode(&ls); err != nil {
			return nil, fmt.Errorf("not an Envoy bootstrap: static_resources.listeners: %w", err)
		}
	}
	var clusters []cluster
	if n := yamlpos.Value(root, "static_resources", "clusters"); n != nil {
		if err := n.Decode(&clusters); err != nil {
			return nil, fmt.Errorf("not an Envoy bootstrap: static_resources.clusters: %w", err)
		}
	}
	var out []Listener
	for _, l := range ls {
		for _, fc := range l.FilterChains {
			for _, f := range fc.Filters {
				if typeOf(&f.TypedConfig) != hcmType {
					continue
				}
				out = append(out, readHCM(l.Name, &f.TypedConfig, clusters, src))
			}
		}
	}
	return out, nil
}

// ErrNoPlugin is the error of a Listener whose HTTP connection manager runs
// no Wasm filter of the guard.
var ErrNoPlugin = errors.New("no Wasm filter (" + WasmType + ") of mcp-resume-guard")

func readHCM(listenerName string, n *yaml.Node, clusters []cluster, src []byte) Listener {
	out := &Bootstrap{StreamIdleTimeout: DefaultStreamIdleTimeout, ConnectTimeout: DefaultConnectTimeout}
	l := Listener{Bootstrap: out}
	var h hcm
	if err := n.Decode(&h); err != nil {
		l.err = fmt.Errorf("listener %s: http_connection_manager: %w", listenerName, err)
		return l
	}
	filterName, defaultOn, err := out.readWasm(listenerName, h.HTTPFilters, src)
	if err != nil {
		l.err = err
		return l
	}
	if h.StreamIdleTimeout != "" {
		if out.StreamIdleTimeout, err = parseDuration(h.StreamIdleTimeout); err != nil {
			l.err = fmt.Errorf("http_connection_manager: stream_idle_timeout: %w", err)
			return l
		}
	}
	if l.TableErr = out.readTable(h, filterName, defaultOn); l.TableErr != nil {
		l.err = l.TableErr
		return l
	}
	cluster := ""
	for _, r := range out.Routes {
		if r.Filter {
			cluster = r.Cluster
			break
		}
	}
	for _, c := range clusters {
		if c.Name != cluster || c.ConnectTimeout == "" {
			continue
		}
		d, err := parseDuration(c.ConnectTimeout)
		if err != nil {
			l.err = fmt.Errorf("cluster %s: connect_timeout: %w", c.Name, err)
			return l
		}
		out.ConnectTimeout = d
	}
	return l
}

// readTable reads the route table of the one inline virtual host.
func (b *Bootstrap) readTable(h hcm, filterName string, defaultOn bool) error {
	if h.RouteConfig == nil {
		return errors.New("the HTTP connection manager has no inline route_config (rds is not supported)")
	}
	if n := len(h.RouteConfig.VirtualHosts); n != 1 {
		return fmt.Errorf("route_config has %d virtual hosts; want exactly one", n)
	}
	vh := h.RouteConfig.VirtualHosts[0]
	vhOn, err := enabled(nodeOf(vh.TypedPerFilterConfig, filterName), defaultOn)
	if err != nil {
		return fmt.Errorf("virtual host %s: typed_per_filter_config %s: %w", vh.Name, filterName, err)
	}
	for i := range vh.Routes {
		rt, err := readRoute(&vh.Routes[i], filterName, vhOn)
		if err != nil {
			name := rt.Name
			if name == "" {
				name = "#" + strconv.Itoa(i)
			}
			return fmt.Errorf("route %s (line %d): %w", name, vh.Routes[i].Line, err)
		}
		b.Routes = append(b.Routes, rt)
	}
	return nil
}

// readWasm finds the guard's Wasm filter in http_filters and keeps its
// plugin configuration. It returns the filter's name (the key of per-route
// configuration) and whether it runs where no route says otherwise.
func (b *Bootstrap) readWasm(listenerName string, filters []typed, src []byte) (string, bool, error) {
	var wasm, ours []*typed
	for i := range filters {
		if typeOf(&filters[i].TypedConfig) == WasmType {
			wasm = append(wasm, &filters[i])
		}
	}
	for _, f := range wasm {
		if len(wasm) == 1 || runsPlugin(yamlpos.Value(&f.TypedConfig, "config")) {
			ours = append(ours, f)
		}
	}
	if len(ours) != 1 {
		err := fmt.Errorf("found %d Wasm filters (%s) in http_filters, %d of them mcp-resume-guard's (by name, root_id, vm_config.vm_id or code file); want exactly one", len(wasm), WasmType, len(ours))
		if len(ours) == 0 {
			err = fmt.Errorf("%w: %w", ErrNoPlugin, err)
		}
		return "", false, err
	}
	f := ours[0]
	b.Where = "listener " + listenerName + " http filter " + f.Name
	cfg := yamlpos.Value(&f.TypedConfig, "config")
	b.RootID = scalar(yamlpos.Value(cfg, "root_id"))
	b.FailurePolicyAt = yamlpos.At(cfg)
	if k, v := yamlpos.Get(cfg, "failure_policy"); v != nil {
		b.FailurePolicy, b.FailurePolicyAt = v.Value, yamlpos.At(k)
		b.FailOpen = v.Value == "FAIL_OPEN"
	} else if k, v := yamlpos.Get(cfg, "fail_open"); v != nil {
		b.FailurePolicyAt, b.FailOpen = yamlpos.At(k), v.Value == "true"
	}
	c := yamlpos.Value(cfg, "configuration")
	if c == nil {
		return "", false, fmt.Errorf("%s (line %d): no config.configuration: the plugin needs its routes", b.Where, f.TypedConfig.Line)
	}
	if t := scalar(yamlpos.Value(c, "@type")); t != StringValueType {
		return "", false, fmt.Errorf("%s (line %d): config.configuration is a %q; want %s (the plugin configuration is a JSON string)", b.Where, c.Line, t, StringValueType)
	}
	v := yamlpos.Value(c, "value")
	if v == nil {
		v = c
	}
	b.PluginConfigText = yamlpos.Embedded(v, src)
	b.PluginConfig = []byte(scalar(yamlpos.Value(c, "value")))
	return f.Name, !f.Disabled, nil
}

// runsPlugin reports whether a Wasm filter's config names the guard.
func runsPlugin(c *yaml.Node) bool {
	for _, v := range []*yaml.Node{yamlpos.Value(c, "name"), yamlpos.Value(c, "root_id"), yamlpos.Value(c, "vm_config", "vm_id")} {
		if scalar(v) == PluginName {
			return true
		}
	}
	return strings.Contains(scalar(yamlpos.Value(c, "vm_config", "code", "local", "filename")), PluginName)
}

func readRoute(n *yaml.Node, filterName string, inherited bool) (Route, error) {
	var r route
	if err := n.Decode(&r); err != nil {
		return Route{}, err
	}
	out := Route{Name: r.Name, At: yamlpos.At(n)}
	m := r.Match
	set := 0
	for _, p := range []*string{m.Path, m.Prefix, m.Sep} {
		if p != nil {
			set++
		}
	}
	switch {
	case !m.Other.IsZero(), !m.Template.IsZero():
		return out, errors.New("matches by regex or template; only path, prefix and path_separated_prefix are supported")
	case !m.Headers.IsZero(), !m.Query.IsZero():
		return out, errors.New("matches on headers or query parameters, which this reader cannot reproduce")
	case m.CaseSensitive != nil && !*m.CaseSensitive:
		return out, errors.New("case_sensitive: false is not supported")
	case set != 1:
		return out, errors.New("want exactly one of match.path, match.prefix and match.path_separated_prefix")
	}
	switch {
	case m.Path != nil:
		out.Path = *m.Path
	case m.Prefix != nil:
		out.Prefix = *m.Prefix
	default:
		out.SeparatedPrefix = *m.Sep
	}
	out.Timeout = DefaultRouteTimeout
	if r.Route != nil {
		out.Cluster = r.Route.Cluster
		if t := r.Route.Timeout; t != nil {
			d, err := parseDuration(*t)
			if err != nil {
				return out, fmt.Errorf("route.timeout: %w", err)
			}
			out.Timeout = d
		}
	}
	on, err := enabled(nodeOf(r.TypedPerFilterConfig, filterName), inherited)
	if err != nil {
		return out, fmt.Errorf("typed_per_filter_config %s: %w", filterName, err)
	}
	out.Filter = on
	return out, nil
}

func nodeOf(m map[string]yaml.Node, key string) *yaml.Node {
	if n, ok := m[key]; ok {
		return &n
	}
	return nil
}

// enabled applies a per-route FilterConfig to the inherited state: a
// FilterConfig without disabled enables the filter (Envoy requires its
// config to be present), disabled: true turns it off.
func enabled(n *yaml.Node, inherited bool) (bool, error) {
	if n == nil {
		return inherited, nil
	}
	var fc filterConfig
	if err := n.Decode(&fc); err != nil {
		return false, err
	}
	if fc.Type != filterCfgType {
		return false, fmt.Errorf("@type %q: the Wasm filter has no per-route configuration; want %s", fc.Type, filterCfgType)
	}
	if fc.Disabled {
		return false, nil
	}
	if fc.Config.IsZero() {
		return false, errors.New("a FilterConfig that enables the filter needs config (e.g. config: {})")
	}
	return true, nil
}

func typeOf(n *yaml.Node) string { return scalar(yamlpos.Value(n, "@type")) }

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
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
