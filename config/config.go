// Package config parses and validates the plugin configuration: the JSON
// string Envoy hands the plugin at start (the Wasm filter's
// config.configuration, or an Istio WasmPlugin's pluginConfig).
//
// Parsing is strict: an unknown key or a bad value is an error that names the
// key and the allowed values, so a typo fails the plugin start instead of
// silently running with a default. Each error is an [*Error] that also says
// where it is as a path (["routes", "1", "transport"]), and [Parse] reports
// every one it finds, as [Errors].
package config

import (
	"bytes"
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
	// Unwind is the way back out ("unwind": true): the guard tags no new
	// event ID (SSE responses pass through byte for byte), still strips
	// the tag of every cursor it issued (tagged and minted cursors keep
	// being understood), and passes untagged cursors unchanged. Parse
	// then sets Policy.Untagged to UntaggedPassthrough and Policy.Minting
	// to false. After one session_ttl_seconds (or the longest stream a
	// server keeps, if longer) no client holds a cursor the upstream
	// cannot read, and the guard can be removed.
	Unwind bool
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
	"mint_cursors", "principal_header", "unwind",
}

var routeKeys = []string{"route_name", "path_prefix", "transport"}

// MaxConfigBytes bounds the configuration: far more than 256 routes with
// fields of 1024 bytes need. It also bounds the stack gjson's recursive
// validation takes on a deeply nested input (about 128 bytes a level).
const MaxConfigBytes = 1 << 20

// Error is one thing wrong with a plugin configuration: where it is, and
// what is wrong with it.
type Error struct {
	// Path is the member at fault, as a program walks the JSON from the
	// top: empty for the configuration as a whole (not JSON, not an
	// object, too big), a top-level key (["max_sessions"]), an entry of
	// routes (["routes", "1"], its index in decimal) or a key of that
	// entry (["routes", "1", "transport"]). A key is given as written
	// after JSON unescaping, whatever characters it holds.
	Path []string
	// Duplicate says that the error is about the second occurrence of the
	// key Path names (a key that appears twice), not the first.
	Duplicate bool
	// Message says what is wrong and what to do, naming the member as a
	// reader writes it (key "max_sessions", routes[1].transport), for
	// example `routes[1].transport must be "sse" or "http", got "grpc"`.
	Message string
}

// Error returns "config: " and the message.
func (e *Error) Error() string { return "config: " + e.Message }

// Errors is every error Parse found, in the order of the input; it is
// never empty. Parse reports each top-level key, and each entry of routes,
// that is wrong (an entry by its first fault), and the checks across keys;
// a configuration that is not a JSON object gives one error.
type Errors []*Error

// Error returns the errors' texts, one a line.
func (es Errors) Error() string {
	var b strings.Builder
	for i, e := range es {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the errors, so errors.As finds the first *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// errorAt returns an Error at path; msg is the message, without "config: ".
func errorAt(msg string, path ...string) *Error {
	return &Error{Path: path, Message: msg}
}

// Parse validates data and returns the configuration. Empty data (or only
// JSON whitespace: no configuration at all) yields Default(); anything else
// must be one JSON object (RFC 8259: no comments, byte order mark, trailing
// commas or trailing data) in valid UTF-8, with each key at most once, each
// value of its key's JSON type (a number written as a string, a float or an
// exponent, a boolean as a string or null are refused, never coerced).
// Any error is an [Errors] of every fault found.
// The strings of the result are copies: data may be reused once Parse
// returns.
func Parse(data []byte) (Config, error) {
	c := Default()
	if len(bytes.Trim(data, jsonSpace)) == 0 {
		return c, nil
	}
	var doc *Error
	switch {
	case len(data) > MaxConfigBytes:
		doc = errorAt("the plugin configuration is " + strconv.Itoa(len(data)) + " bytes; at most " + strconv.Itoa(MaxConfigBytes) + " are allowed")
	case bytes.HasPrefix(data, []byte("\xef\xbb\xbf")):
		doc = errorAt("not valid JSON (it starts with a UTF-8 byte order mark); the plugin configuration must be a JSON object")
	case !gjson.ValidBytes(data):
		doc = errorAt("not valid JSON; the plugin configuration must be a JSON object")
	case !utf8.Valid(data):
		doc = errorAt("not valid UTF-8; the plugin configuration must be a JSON object in UTF-8")
	}
	if doc != nil {
		return c, Errors{doc}
	}
	// ParseBytes copies data into a string: every result points into it.
	root := gjson.ParseBytes(data)
	if !root.IsObject() {
		return c, Errors{errorAt("the plugin configuration must be a JSON object, got " + kindOf(root))}
	}
	var errs Errors
	// gjson hands over every member, duplicates included, in order: a
	// second one would silently override the first.
	// seen counts each key's occurrences; set: the keys the configuration
	// sets to a valid value.
	seen, set := map[string]int{}, map[string]bool{}
	root.ForEach(func(k, v gjson.Result) bool {
		if seen[k.Str]++; seen[k.Str] > 1 {
			if seen[k.Str] == 2 {
				errs = append(errs, &Error{Path: []string{k.Str}, Duplicate: true, Message: "key " + strconv.Quote(k.Str) + " appears twice"})
			}
			return true
		}
		e := c.set(k.Str, v)
		errs = append(errs, e...)
		set[k.Str] = len(e) == 0
		return true
	})
	errs = append(errs, c.unwind(set)...)
	if len(errs) > 0 {
		return c, errs
	}
	return c, nil
}

// unwind applies "unwind": true, given which keys the configuration sets
// (to a valid value):
// untagged cursors pass (the upstream mints nothing else during the
// unwind), nothing is minted (nothing is tagged), and a tagged cursor no
// watermark mentions is forwarded stripped. A key set to the opposite is an
// error.
func (c *Config) unwind(set map[string]bool) Errors {
	if !c.Unwind {
		return nil
	}
	var errs Errors
	if set["untagged_cursor"] && c.Policy.Untagged == cursor.UntaggedReinit {
		errs = append(errs, errorAt(`key "untagged_cursor": "reinit" refuses exactly the cursors the upstream mints while "unwind" is true `+
			`(the guard tags no new event ID, so every new cursor is untagged); remove untagged_cursor (unwind passes untagged cursors) or set unwind to false`,
			"untagged_cursor"))
	}
	if set["mint_cursors"] && c.Policy.Minting {
		errs = append(errs, errorAt(`key "mint_cursors": true mints cursors, but while "unwind" is true the guard tags no event ID; `+
			`remove mint_cursors (unwind turns minting off) or set unwind to false`, "mint_cursors"))
	}
	if set["unknown_cursor"] && c.Policy.Unknown == cursor.UnknownReinit {
		errs = append(errs, errorAt(`key "unknown_cursor": "reinit" refuses every tagged cursor a replica holds no watermark for, and while "unwind" is true `+
			`no replica records new ones; remove unknown_cursor or set unwind to false`, "unknown_cursor"))
	}
	c.Policy.Untagged, c.Policy.Minting, c.Policy.Unknown = cursor.UntaggedPassthrough, false, cursor.UnknownForward
	return errs
}

// jsonSpace is JSON's whitespace (RFC 8259 section 2).
const jsonSpace = " \t\n\r"

// set sets key from v; the errors are v's.
func (c *Config) set(key string, v gjson.Result) Errors {
	var err *Error
	switch key {
	case "routes":
		return c.setRoutes(v)
	case "untagged_cursor":
		err = enum(key, v, &c.Policy.Untagged, map[string]cursor.UntaggedPolicy{
			"reinit": cursor.UntaggedReinit, "passthrough": cursor.UntaggedPassthrough}, "reinit", "passthrough")
	case "unacked_cursor":
		err = enum(key, v, &c.Policy.Unacked, map[string]cursor.UnackedPolicy{
			"reinit": cursor.UnackedReinit, "rewind": cursor.UnackedRewind, "observe": cursor.UnackedObserve},
			"reinit", "rewind", "observe")
	case "unacked_scope":
		err = enum(key, v, &c.Policy.Scope, map[string]cursor.Scope{
			"responses": cursor.ScopeResponses, "all": cursor.ScopeAll}, "responses", "all")
	case "upstream_replay":
		err = enum(key, v, &c.Policy.Replay, map[string]cursor.ReplayMode{
			"exclusive": cursor.ReplayExclusive, "inclusive": cursor.ReplayInclusive}, "exclusive", "inclusive")
	case "unknown_cursor":
		err = enum(key, v, &c.Policy.Unknown, map[string]cursor.UnknownPolicy{
			"forward": cursor.UnknownForward, "reinit": cursor.UnknownReinit}, "forward", "reinit")
	case "legacy_reinit":
		err = enum(key, v, &c.LegacyReinit, map[string]LegacyReinit{
			"reply": LegacyReply, "drop_cursor": LegacyDropCursor}, "reply", "drop_cursor")
	case "max_sessions":
		err = integer(key, v, &c.MaxSessions, 1, MaxMaxSessions)
	case "session_ttl_seconds":
		err = integer(key, v, &c.SessionTTLSeconds, 1, MaxSessionTTL)
	case "max_line_bytes":
		err = integer(key, v, &c.MaxLineBytes, MinMaxLineBytes, MaxMaxLineBytes)
	case "mint_cursors":
		err = boolean(key, v, &c.Policy.Minting)
	case "principal_header":
		err = headerName(key, v, &c.PrincipalHeader)
	case "unwind":
		err = boolean(key, v, &c.Unwind)
	default:
		err = errorAt("unknown key "+strconv.Quote(key)+"; allowed keys: "+strings.Join(Keys, ", "), key)
	}
	if err != nil {
		return Errors{err}
	}
	return nil
}

// setRoutes sets the routes from v; the errors are the list's, or each
// wrong entry's first.
func (c *Config) setRoutes(v gjson.Result) Errors {
	if !v.IsArray() {
		return Errors{errorAt(`key "routes" must be a list of {"route_name", "path_prefix", "transport"} objects, got `+kindOf(v), "routes")}
	}
	items := v.Array()
	if len(items) > maxRoutes {
		return Errors{errorAt(`key "routes" holds `+strconv.Itoa(len(items))+" entries; at most "+strconv.Itoa(maxRoutes)+" are allowed", "routes")}
	}
	c.Routes = make([]Route, 0, len(items))
	var errs Errors
	for i, item := range items {
		r, err := route(strconv.Itoa(i), item)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.Routes = append(c.Routes, r)
	}
	return errs
}

// route reads the entry of routes at index i (in decimal).
func route(i string, item gjson.Result) (Route, *Error) {
	at := "routes[" + i + "]"
	if !item.IsObject() {
		return Route{}, errorAt(at+` must be an object with "route_name", "path_prefix" and "transport", got `+kindOf(item), "routes", i)
	}
	var r Route
	var err *Error
	seen := map[string]bool{}
	item.ForEach(func(k, f gjson.Result) bool {
		if seen[k.Str] {
			err = &Error{Path: []string{"routes", i, k.Str}, Duplicate: true, Message: at + ": key " + strconv.Quote(k.Str) + " appears twice"}
			return false
		}
		seen[k.Str] = true
		switch k.Str {
		case "route_name", "path_prefix":
			if f.Type != gjson.String || len(f.Str) > maxRouteFieldBytes {
				err = errorAt(at+"."+k.Str+" must be a string of at most "+strconv.Itoa(maxRouteFieldBytes)+" bytes", "routes", i, k.Str)
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
				err = errorAt(at+`.transport must be "sse" or "http", got `+f.Raw, "routes", i, "transport")
				return false
			}
			r.Transport = t
		default:
			err = errorAt(at+": unknown key "+strconv.Quote(k.Str)+"; allowed keys: "+strings.Join(routeKeys, ", "), "routes", i, k.Str)
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return Route{}, err
	case r.Transport == cursor.TransportNone:
		return Route{}, errorAt(at+`: "transport" is required ("sse" or "http")`, "routes", i)
	case r.RouteName == "" && r.PathPrefix == "":
		return Route{}, errorAt(at+`: set "route_name", "path_prefix" or both, or the entry matches nothing`, "routes", i)
	case r.PathPrefix != "" && r.PathPrefix[0] != '/':
		return Route{}, errorAt(at+`.path_prefix must start with "/", got `+strconv.Quote(r.PathPrefix), "routes", i, "path_prefix")
	}
	return r, nil
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
	if !strings.HasPrefix(path, prefix) {
		return false
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

func enum[T any](key string, v gjson.Result, dst *T, values map[string]T, allowed ...string) *Error {
	if v.Type == gjson.String {
		if t, ok := values[v.Str]; ok {
			*dst = t
			return nil
		}
	}
	return errorAt("key "+strconv.Quote(key)+": "+v.Raw+" is not one of "+strings.Join(allowed, ", "), key)
}

func boolean(key string, v gjson.Result, dst *bool) *Error {
	switch v.Type {
	case gjson.True, gjson.False:
		*dst = v.Type == gjson.True
		return nil
	}
	return errorAt("key "+strconv.Quote(key)+": "+v.Raw+" is not true or false", key)
}

// headerName reads a lower-case HTTP header name (Envoy hands the plugin
// lower-case names), or "" to turn the feature off.
func headerName(key string, v gjson.Result, dst *string) *Error {
	if v.Type == gjson.String && len(v.Str) <= maxRouteFieldBytes && validHeaderName(v.Str) {
		*dst = v.Str
		return nil
	}
	return errorAt("key "+strconv.Quote(key)+": "+v.Raw+` is not a lower-case HTTP header name (e.g. "authorization", "x-jwt-sub") or ""`, key)
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

func integer(key string, v gjson.Result, dst *int, lo, hi int) *Error {
	if v.Type == gjson.Number {
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		if err == nil && n >= int64(lo) && n <= int64(hi) {
			*dst = int(n)
			return nil
		}
	}
	return errorAt("key "+strconv.Quote(key)+": "+v.Raw+" is not an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi), key)
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
