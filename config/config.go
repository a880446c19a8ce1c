// Package config parses and validates the plugin configuration: the JSON
// string Envoy hands the plugin at start (the Wasm filter's
// config.configuration, or an Istio WasmPlugin's pluginConfig).
//
// Parsing is strict: an unknown key or a bad value is an error that names the
// key and the allowed values, so a typo fails the plugin start instead of
// silently running with a default.
package config

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/tidwall/gjson"
)

// Defaults of the numeric keys.
const (
	DefaultMaxSessions       = 10000
	DefaultSessionTTLSeconds = 3600
	DefaultMaxLineBytes      = 8192
)

// Bounds of the numeric keys.
const (
	MaxMaxSessions     = 1_000_000
	MinMaxLineBytes    = 64
	MaxMaxLineBytes    = 1 << 20
	MaxSessionTTL      = 7 * 24 * 3600
	maxRoutes          = 256
	maxRouteFieldBytes = 1024
)

// Route selects requests the filter guards and the transport they speak.
// An entry matches when every field it sets matches: RouteName equals Envoy's
// xds.route_name, and the request path lies under PathPrefix by whole path
// segments (see [PathHasPrefix]).
type Route struct {
	RouteName  string
	PathPrefix string
	Transport  cursor.Transport
}

// LegacyReinit says how a forced re-initialization is delivered on a legacy
// HTTP+SSE route.
type LegacyReinit uint8

const (
	// LegacyReply answers 404 with the JSON-RPC error, as on Streamable HTTP.
	LegacyReply LegacyReinit = iota
	// LegacyDropCursor forwards a GET without its Last-Event-ID, so the
	// upstream opens a fresh stream (and a fresh session).
	LegacyDropCursor
)

// Config is the validated plugin configuration.
type Config struct {
	Routes            []Route
	Policy            cursor.Policy
	LegacyReinit      LegacyReinit
	MaxSessions       int
	SessionTTLSeconds int
	MaxLineBytes      int
	// PrincipalHeader names the request header whose value (its digest,
	// never the value) binds a tombstone to the credentials that were
	// refused; "" binds tombstones to the session alone.
	PrincipalHeader string
}

// DefaultPrincipalHeader is the default of "principal_header".
const DefaultPrincipalHeader = "authorization"

// Default returns the configuration of an empty JSON object: no routes, every
// policy at its default.
func Default() Config {
	return Config{
		MaxSessions:       DefaultMaxSessions,
		SessionTTLSeconds: DefaultSessionTTLSeconds,
		MaxLineBytes:      DefaultMaxLineBytes,
		Policy:            cursor.Policy{Unacked: cursor.UnackedRewind, Minting: true},
		PrincipalHeader:   DefaultPrincipalHeader,
	}
}

// Keys lists every configuration key, in documentation order.
var Keys = []string{
	"routes", "untagged_cursor", "unacked_cursor", "unacked_scope",
	"upstream_replay", "unknown_cursor", "legacy_reinit",
	"max_sessions", "session_ttl_seconds", "max_line_bytes",
	"mint_cursors", "principal_header",
}

var routeKeys = []string{"route_name", "path_prefix", "transport"}

// MaxConfigBytes bounds the configuration: far more than 256 routes with
// fields of 1024 bytes need. It also bounds the stack gjson's recursive
// validation takes on a deeply nested input (about 128 bytes a level).
const MaxConfigBytes = 1 << 20

// Parse validates data and returns the configuration. Empty data (or only
// JSON whitespace: no configuration at all) yields Default(); anything else
// must be one JSON object (RFC 8259: no comments, byte order mark, trailing
// commas or trailing data) in valid UTF-8, with each key at most once, each
// value of its key's JSON type (a number written as a string, a float or an
// exponent, a boolean as a string or null are refused, never coerced).
// The strings of the result are copies: data may be reused once Parse
// returns.
func Parse(data []byte) (Config, error) {
	c := Default()
	if len(bytes.Trim(data, jsonSpace)) == 0 {
		return c, nil
	}
	switch {
	case len(data) > MaxConfigBytes:
		return c, errors.New("config: the plugin configuration is " + strconv.Itoa(len(data)) + " bytes; at most " + strconv.Itoa(MaxConfigBytes) + " are allowed")
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		return c, errors.New("config: not valid JSON (it starts with a UTF-8 byte order mark); the plugin configuration must be a JSON object")
	case !gjson.ValidBytes(data):
		return c, errors.New("config: not valid JSON; the plugin configuration must be a JSON object")
	case !utf8.Valid(data):
		return c, errors.New("config: not valid UTF-8; the plugin configuration must be a JSON object in UTF-8")
	}
	// ParseBytes copies data into a string: every result points into it.
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return c, errors.New("config: the plugin configuration must be a JSON object, got " + kindOf(root))
	}
	var err error
	// gjson hands over every member, duplicates included, in order: a
	// second one would silently override the first.
	seen := map[string]bool{}
	root.ForEach(func(k, v gjson.Result) bool {
		if seen[k.Str] {
			err = errors.New("config: key " + strconv.Quote(k.Str) + " appears twice")
			return false
		}
		seen[k.Str] = true
		err = c.set(k.Str, v)
		return err == nil
	})
	if err != nil {
		return c, err
	}
	return c, nil
}

// jsonSpace is JSON's whitespace (RFC 8259 section 2).
const jsonSpace = " \t\n\r"

func (c *Config) set(key string, v gjson.Result) error {
	switch key {
	case "routes":
		return c.setRoutes(v)
	case "untagged_cursor":
		return enum(key, v, &c.Policy.Untagged, map[string]cursor.UntaggedPolicy{
			"reinit": cursor.UntaggedReinit, "passthrough": cursor.UntaggedPassthrough}, "reinit", "passthrough")
	case "unacked_cursor":
		return enum(key, v, &c.Policy.Unacked, map[string]cursor.UnackedPolicy{
			"reinit": cursor.UnackedReinit, "rewind": cursor.UnackedRewind, "observe": cursor.UnackedObserve},
			"reinit", "rewind", "observe")
	case "unacked_scope":
		return enum(key, v, &c.Policy.Scope, map[string]cursor.Scope{
			"responses": cursor.ScopeResponses, "all": cursor.ScopeAll}, "responses", "all")
	case "upstream_replay":
		return enum(key, v, &c.Policy.Replay, map[string]cursor.ReplayMode{
			"exclusive": cursor.ReplayExclusive, "inclusive": cursor.ReplayInclusive}, "exclusive", "inclusive")
	case "unknown_cursor":
		return enum(key, v, &c.Policy.Unknown, map[string]cursor.UnknownPolicy{
			"forward": cursor.UnknownForward, "reinit": cursor.UnknownReinit}, "forward", "reinit")
	case "legacy_reinit":
		return enum(key, v, &c.LegacyReinit, map[string]LegacyReinit{
			"reply": LegacyReply, "drop_cursor": LegacyDropCursor}, "reply", "drop_cursor")
	case "max_sessions":
		return integer(key, v, &c.MaxSessions, 1, MaxMaxSessions)
	case "session_ttl_seconds":
		return integer(key, v, &c.SessionTTLSeconds, 1, MaxSessionTTL)
	case "max_line_bytes":
		return integer(key, v, &c.MaxLineBytes, MinMaxLineBytes, MaxMaxLineBytes)
	case "mint_cursors":
		return boolean(key, v, &c.Policy.Minting)
	case "principal_header":
		return headerName(key, v, &c.PrincipalHeader)
	}
	return errors.New("config: unknown key " + strconv.Quote(key) + "; allowed keys: " + strings.Join(Keys, ", "))
}

func (c *Config) setRoutes(v gjson.Result) error {
	if !v.IsArray() {
		return errors.New(`config: key "routes" must be a list of {"route_name", "path_prefix", "transport"} objects, got ` + kindOf(v))
	}
	items := v.Array()
	if len(items) > maxRoutes {
		return errors.New(`config: key "routes" holds ` + strconv.Itoa(len(items)) + " entries; at most " + strconv.Itoa(maxRoutes) + " are allowed")
	}
	c.Routes = make([]Route, 0, len(items))
	for i, item := range items {
		at := `config: routes[` + strconv.Itoa(i) + `]`
		if !item.IsObject() {
			return errors.New(at + ` must be an object with "route_name", "path_prefix" and "transport", got ` + kindOf(item))
		}
		var r Route
		var err error
		seen := map[string]bool{}
		item.ForEach(func(k, f gjson.Result) bool {
			if seen[k.Str] {
				err = errors.New(at + ": key " + strconv.Quote(k.Str) + " appears twice")
				return false
			}
			seen[k.Str] = true
			switch k.Str {
			case "route_name", "path_prefix":
				if f.Type != gjson.String || len(f.Str) > maxRouteFieldBytes {
					err = errors.New(at + "." + k.Str + " must be a string of at most " + strconv.Itoa(maxRouteFieldBytes) + " bytes")
					return false
				}
				if k.Str == "route_name" {
					r.RouteName = f.Str
				} else {
					r.PathPrefix = f.Str
				}
			case "transport":
				t, ok := cursor.ParseTransport(f.Str)
				if f.Type != gjson.String || !ok {
					err = errors.New(at + `.transport must be "sse" or "http", got ` + f.Raw)
					return false
				}
				r.Transport = t
			default:
				err = errors.New(at + ": unknown key " + strconv.Quote(k.Str) + "; allowed keys: " + strings.Join(routeKeys, ", "))
				return false
			}
			return true
		})
		if err != nil {
			return err
		}
		if r.Transport == cursor.TransportNone {
			return errors.New(at + `: "transport" is required ("sse" or "http")`)
		}
		if r.RouteName == "" && r.PathPrefix == "" {
			return errors.New(at + `: set "route_name", "path_prefix" or both, or the entry matches nothing`)
		}
		if r.PathPrefix != "" && r.PathPrefix[0] != '/' {
			return errors.New(at + `.path_prefix must start with "/", got ` + strconv.Quote(r.PathPrefix))
		}
		c.Routes = append(c.Routes, r)
	}
	return nil
}

// Match returns the transport of the first route that matches the request,
// or TransportNone when the filter must leave the request alone.
func (c *Config) Match(routeName, path string) cursor.Transport {
	for i := range c.Routes {
		r := &c.Routes[i]
		if r.RouteName != "" && r.RouteName != routeName {
			continue
		}
		if r.PathPrefix != "" && !PathHasPrefix(path, r.PathPrefix) {
			continue
		}
		return r.Transport
	}
	return cursor.TransportNone
}

// PathHasPrefix reports whether a request path (Envoy's :path, query and
// fragment included) lies under prefix by whole path segments, as Envoy's
// path_separated_prefix matches: the path starts with prefix, and what
// follows is nothing, "/", "?" or "#". So "/mcp" matches "/mcp", "/mcp/x",
// "/mcp?x=1" and "/mcp#f", never "/mcp-anything" or "/mcpfoo". A prefix
// that ends in "/" ("/", "/api/") matches every path that starts with it.
// It runs on every request inside the VM: no allocation.
func PathHasPrefix(path, prefix string) bool {
	if len(path) < len(prefix) {
		return false
	}
	// Byte by byte, not path[:len(prefix)] != prefix: route prefixes are
	// short, and the string comparison is two runtime calls in the VM, on
	// every request of a mesh.
	for i := 0; i < len(prefix); i++ {
		if path[i] != prefix[i] {
			return false
		}
	}
	if len(path) == len(prefix) || prefix == "" || prefix[len(prefix)-1] == '/' {
		return true
	}
	switch path[len(prefix)] {
	case '/', '?', '#':
		return true
	}
	return false
}

// NeedsRouteName reports whether any route matches on xds.route_name, so the
// plugin reads that property only when it matters.
func (c *Config) NeedsRouteName() bool {
	for i := range c.Routes {
		if c.Routes[i].RouteName != "" {
			return true
		}
	}
	return false
}

func enum[T any](key string, v gjson.Result, dst *T, values map[string]T, allowed ...string) error {
	if v.Type == gjson.String {
		if t, ok := values[v.Str]; ok {
			*dst = t
			return nil
		}
	}
	return errors.New("config: key " + strconv.Quote(key) + ": " + v.Raw + " is not one of " + strings.Join(allowed, ", "))
}

func boolean(key string, v gjson.Result, dst *bool) error {
	switch v.Type {
	case gjson.True, gjson.False:
		*dst = v.Type == gjson.True
		return nil
	}
	return errors.New("config: key " + strconv.Quote(key) + ": " + v.Raw + " is not true or false")
}

// headerName reads a lower-case HTTP header name (Envoy hands the plugin
// lower-case names), or "" to turn the feature off.
func headerName(key string, v gjson.Result, dst *string) error {
	if v.Type == gjson.String && len(v.Str) <= maxRouteFieldBytes && validHeaderName(v.Str) {
		*dst = v.Str
		return nil
	}
	return errors.New("config: key " + strconv.Quote(key) + ": " + v.Raw + ` is not a lower-case HTTP header name (e.g. "authorization", "x-jwt-sub") or ""`)
}

func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func integer(key string, v gjson.Result, dst *int, lo, hi int) error {
	if v.Type == gjson.Number {
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		if err == nil && n >= int64(lo) && n <= int64(hi) {
			*dst = int(n)
			return nil
		}
	}
	return errors.New("config: key " + strconv.Quote(key) + ": " + v.Raw + " is not an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi))
}

func kindOf(v gjson.Result) string {
	switch {
	case v.IsObject():
		return "an object"
	case v.IsArray():
		return "a list"
	}
	switch v.Type {
	case gjson.String:
		return "a string"
	case gjson.Number:
		return "a number"
	case gjson.True, gjson.False:
		return "a boolean"
	case gjson.Null:
		return "null"
	}
	return "nothing"
}
