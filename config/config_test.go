package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// with returns Default() changed by f.
func with(f func(*Config)) Config {
	c := Default()
	f(&c)
	return c
}

func TestParseValid(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want Config
	}{
		{"nil_input", "", Default()},
		{"blank_input", " \n\t ", Default()},
		{"empty_object", "{}", Default()},
		{"empty_object_with_space", " { } \n", Default()},

		{"untagged_reinit", `{"untagged_cursor":"reinit"}`, with(func(c *Config) { c.Policy.Untagged = cursor.UntaggedReinit })},
		{"untagged_passthrough", `{"untagged_cursor":"passthrough"}`, with(func(c *Config) { c.Policy.Untagged = cursor.UntaggedPassthrough })},
		{"unacked_reinit", `{"unacked_cursor":"reinit"}`, with(func(c *Config) { c.Policy.Unacked = cursor.UnackedReinit })},
		{"unacked_rewind", `{"unacked_cursor":"rewind"}`, with(func(c *Config) { c.Policy.Unacked = cursor.UnackedRewind })},
		{"unacked_observe", `{"unacked_cursor":"observe"}`, with(func(c *Config) { c.Policy.Unacked = cursor.UnackedObserve })},
		{"scope_responses", `{"unacked_scope":"responses"}`, with(func(c *Config) { c.Policy.Scope = cursor.ScopeResponses })},
		{"scope_all", `{"unacked_scope":"all"}`, with(func(c *Config) { c.Policy.Scope = cursor.ScopeAll })},
		{"replay_exclusive", `{"upstream_replay":"exclusive"}`, with(func(c *Config) { c.Policy.Replay = cursor.ReplayExclusive })},
		{"replay_inclusive", `{"upstream_replay":"inclusive"}`, with(func(c *Config) { c.Policy.Replay = cursor.ReplayInclusive })},
		{"unknown_forward", `{"unknown_cursor":"forward"}`, with(func(c *Config) { c.Policy.Unknown = cursor.UnknownForward })},
		{"unknown_reinit", `{"unknown_cursor":"reinit"}`, with(func(c *Config) { c.Policy.Unknown = cursor.UnknownReinit })},
		{"legacy_reply", `{"legacy_reinit":"reply"}`, with(func(c *Config) { c.LegacyReinit = LegacyReply })},
		{"legacy_drop_cursor", `{"legacy_reinit":"drop_cursor"}`, with(func(c *Config) { c.LegacyReinit = LegacyDropCursor })},
		{"mint_off", `{"mint_cursors":false}`, with(func(c *Config) { c.Policy.Minting = false })},
		{"mint_on", `{"mint_cursors":true}`, with(func(c *Config) { c.Policy.Minting = true })},
		{"principal_custom", `{"principal_header":"x-forwarded-client-cert"}`, with(func(c *Config) { c.PrincipalHeader = "x-forwarded-client-cert" })},
		{"principal_off", `{"principal_header":""}`, with(func(c *Config) { c.PrincipalHeader = "" })},
		{"unwind_off", `{"unwind":false}`, Default()},
		// The way back: untagged cursors pass, nothing is minted.
		{"unwind_on", `{"unwind":true}`, with(func(c *Config) {
			c.Unwind, c.Policy.Untagged, c.Policy.Minting = true, cursor.UntaggedPassthrough, false
		})},
		{"unwind_with_what_it_sets", `{"unwind":true,"untagged_cursor":"passthrough","mint_cursors":false}`, with(func(c *Config) {
			c.Unwind, c.Policy.Untagged, c.Policy.Minting = true, cursor.UntaggedPassthrough, false
		})},
		{"unwind_keeps_other_policies", `{"unacked_cursor":"observe","unwind":true,"unknown_cursor":"forward"}`, with(func(c *Config) {
			c.Unwind, c.Policy.Untagged, c.Policy.Minting = true, cursor.UntaggedPassthrough, false
			c.Policy.Unacked = cursor.UnackedObserve
		})},
		{"unwind_off_keeps_reinit", `{"unwind":false,"untagged_cursor":"reinit","mint_cursors":true}`, Default()},

		{"max_sessions_min", `{"max_sessions":1}`, with(func(c *Config) { c.MaxSessions = 1 })},
		{"max_sessions_max", `{"max_sessions":1000000}`, with(func(c *Config) { c.MaxSessions = MaxMaxSessions })},
		{"session_ttl_min", `{"session_ttl_seconds":1}`, with(func(c *Config) { c.SessionTTLSeconds = 1 })},
		{"session_ttl_max", `{"session_ttl_seconds":604800}`, with(func(c *Config) { c.SessionTTLSeconds = MaxSessionTTL })},
		{"max_line_bytes_min", `{"max_line_bytes":64}`, with(func(c *Config) { c.MaxLineBytes = MinMaxLineBytes })},
		{"max_line_bytes_max", `{"max_line_bytes":1048576}`, with(func(c *Config) { c.MaxLineBytes = MaxMaxLineBytes })},

		{"routes_empty", `{"routes":[]}`, with(func(c *Config) { c.Routes = []Route{} })},
		{"routes_all_fields", `{"routes":[
			{"route_name":"mcp-legacy","path_prefix":"/sse","transport":"sse"},
			{"route_name":"mcp","transport":"http"},
			{"path_prefix":"/messages","transport":"sse"}]}`,
			with(func(c *Config) {
				c.Routes = []Route{
					{RouteName: "mcp-legacy", PathPrefix: "/sse", Transport: cursor.TransportSSE},
					{RouteName: "mcp", Transport: cursor.TransportHTTP},
					{PathPrefix: "/messages", Transport: cursor.TransportSSE},
				}
			})},
		{"route_escaped_strings", `{"routes":[{"route_name":"a\"b\u00e9","path_prefix":"/x y","transport":"http"}]}`,
			with(func(c *Config) {
				c.Routes = []Route{{RouteName: "a\"bé", PathPrefix: "/x y", Transport: cursor.TransportHTTP}}
			})},
		{"escaped_key", `{"max\u005fsessions":5}`, with(func(c *Config) { c.MaxSessions = 5 })},
		{"escaped_value", `{"principal_header":"x-jwt\u002dsub"}`, with(func(c *Config) { c.PrincipalHeader = "x-jwt-sub" })},
		{"every_json_space", " \t\r\n{ \t\r\n\"max_sessions\" \t\r\n: \t\r\n7 \t\r\n} \t\r\n", with(func(c *Config) { c.MaxSessions = 7 })},
		{"exact_integer_text", `{"max_sessions":1000,"session_ttl_seconds":90,"max_line_bytes":65536}`, with(func(c *Config) { c.MaxSessions, c.SessionTTLSeconds, c.MaxLineBytes = 1000, 90, 65536 })},
		{"unicode_route_name", `{"routes":[{"route_name":"mcp-é","transport":"http"}]}`, with(func(c *Config) { c.Routes = []Route{{RouteName: "mcp-é", Transport: cursor.TransportHTTP}} })},

		{"everything", `{
			"routes": [{"path_prefix": "/mcp", "transport": "http"}],
			"untagged_cursor": "passthrough",
			"unacked_cursor": "rewind",
			"unacked_scope": "all",
			"upstream_replay": "inclusive",
			"unknown_cursor": "reinit",
			"legacy_reinit": "drop_cursor",
			"max_sessions": 500,
			"session_ttl_seconds": 60,
			"max_line_bytes": 4096,
			"mint_cursors": false,
			"principal_header": "x-jwt-sub",
			"unwind": false
		}`, Config{
			Routes: []Route{{PathPrefix: "/mcp", Transport: cursor.TransportHTTP}},
			Policy: cursor.Policy{
				Untagged: cursor.UntaggedPassthrough, Unacked: cursor.UnackedRewind, Scope: cursor.ScopeAll,
				Replay: cursor.ReplayInclusive, Unknown: cursor.UnknownReinit, Minting: false,
			},
			LegacyReinit: LegacyDropCursor, MaxSessions: 500, SessionTTLSeconds: 60, MaxLineBytes: 4096,
			PrincipalHeader: "x-jwt-sub",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatalf("Parse(%s): %v", tc.in, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Parse(%s) =\n %+v\nwant\n %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	c := Default()
	if c.MaxSessions != 10000 || c.SessionTTLSeconds != 3600 || c.MaxLineBytes != 8192 {
		t.Errorf("numeric defaults %+v", c)
	}
	if c.Policy != (cursor.Policy{
		Untagged: cursor.UntaggedReinit, Unacked: cursor.UnackedRewind, Scope: cursor.ScopeResponses,
		Replay: cursor.ReplayExclusive, Unknown: cursor.UnknownForward, Minting: true,
	}) {
		t.Errorf("policy defaults %+v", c.Policy)
	}
	if c.LegacyReinit != LegacyReply || len(c.Routes) != 0 || !c.Policy.Minting || c.PrincipalHeader != "authorization" {
		t.Errorf("defaults %+v", c)
	}
	if c.Match("any", "/any") != cursor.TransportNone {
		t.Error("the default configuration guards a route")
	}
}

func TestParseErrors(t *testing.T) {
	allKeys := strings.Join(Keys, ", ")
	cases := []struct {
		name string
		in   string
		at   string   // the first error's Path, joined by "/"; " (second)" when Duplicate
		want []string // every one must appear in the first error's Message
	}{
		{"invalid_json", `{"max_sessions":`, "", []string{"not valid JSON", "JSON object"}},
		{"invalid_json_trailing", `{} {}`, "", []string{"not valid JSON"}},
		{"invalid_json_single_quotes", `{'a':1}`, "", []string{"not valid JSON"}},
		{"json_list", `[]`, "", []string{"JSON object", "a list"}},
		{"json_string", `"routes"`, "", []string{"JSON object", "a string"}},
		{"json_number", `1`, "", []string{"JSON object", "a number"}},
		{"json_null", `null`, "", []string{"JSON object", "null"}},
		{"json_bool", `true`, "", []string{"JSON object", "a boolean"}},

		// What gjson's leniency could let through: gjson.Valid first, then
		// every value's JSON type, and duplicates counted.
		{"bom", "\xef\xbb\xbf{}", "", []string{"not valid JSON", "byte order mark"}},
		{"comment_block", `{/* max */"max_sessions":10}`, "", []string{"not valid JSON"}},
		{"comment_line", "{\"max_sessions\":10 // ten\n}", "", []string{"not valid JSON"}},
		{"comment_hash", "# config\n{}", "", []string{"not valid JSON"}},
		{"trailing_garbage", `{}x`, "", []string{"not valid JSON"}},
		{"trailing_comma_after_object", `{},`, "", []string{"not valid JSON"}},
		{"trailing_brace", `{"max_sessions":10}}`, "", []string{"not valid JSON"}},
		{"trailing_comma_in_object", `{"max_sessions":10,}`, "", []string{"not valid JSON"}},
		{"trailing_comma_in_routes", `{"routes":[{"path_prefix":"/","transport":"sse"},]}`, "", []string{"not valid JSON"}},
		{"unquoted_key", `{max_sessions:10}`, "", []string{"not valid JSON"}},
		{"nan", `{"max_sessions":NaN}`, "", []string{"not valid JSON"}},
		{"infinity", `{"max_sessions":Infinity}`, "", []string{"not valid JSON"}},
		{"plus_sign", `{"max_sessions":+10}`, "", []string{"not valid JSON"}},
		{"hex", `{"max_sessions":0x10}`, "", []string{"not valid JSON"}},
		{"leading_zero", `{"max_sessions":010}`, "", []string{"not valid JSON"}},
		{"raw_tab_in_string", "{\"principal_header\":\"a\tb\"}", "", []string{"not valid JSON"}},
		{"bad_escape", `{"principal_header":"\x41"}`, "", []string{"not valid JSON"}},
		{"vertical_tab_is_not_json_space", "\v", "", []string{"not valid JSON"}},
		{"nbsp_around_object", "\u00a0{}", "", []string{"not valid JSON"}},
		{"unclosed_string", `{"principal_header":"x}`, "", []string{"not valid JSON"}},
		{"deep_nesting", `{"routes":` + strings.Repeat("[", 100000), "", []string{"not valid JSON"}},
		{"invalid_utf8", "{\"routes\":[{\"route_name\":\"\xff\",\"transport\":\"http\"}]}", "", []string{"UTF-8"}},
		{"too_big", `{"routes":[` + strings.Repeat(" ", MaxConfigBytes) + `]}`, "", []string{"bytes", "at most 1048576"}},
		{"duplicate_key_escaped", `{"max_sessions":1,"max\u005fsessions":2}`, "max_sessions (second)", []string{`"max_sessions"`, "twice"}},
		{"duplicate_routes", `{"routes":[],"routes":[{"path_prefix":"/","transport":"sse"}]}`, "routes (second)", []string{`"routes"`, "twice"}},
		{"duplicate_unknown_key", `{"bogus":1,"bogus":2}`, "bogus", []string{`"bogus"`, "unknown key"}},
		{"route_duplicate_name", `{"routes":[{"route_name":"a","route_name":"b","transport":"sse"}]}`, "routes/0/route_name (second)", []string{"routes[0]", `"route_name"`, "twice"}},
		{"route_duplicate_escaped", `{"routes":[{"path_prefix":"/a","path\u005fprefix":"/b","transport":"sse"}]}`, "routes/0/path_prefix (second)", []string{"routes[0]", `"path_prefix"`, "twice"}},
		{"ttl_string", `{"session_ttl_seconds":"60"}`, "session_ttl_seconds", []string{`"session_ttl_seconds"`, `"60"`, "integer"}},
		{"line_string", `{"max_line_bytes":"4096"}`, "max_line_bytes", []string{`"max_line_bytes"`, `"4096"`, "integer"}},
		{"max_sessions_exponent_upper", `{"max_sessions":1E3}`, "max_sessions", []string{`"max_sessions"`, "1E3", "integer"}},
		{"max_sessions_exponent_signed", `{"max_sessions":1e+3}`, "max_sessions", []string{`"max_sessions"`, "integer"}},
		{"max_sessions_fraction_exponent", `{"max_sessions":1.5e2}`, "max_sessions", []string{`"max_sessions"`, "integer"}},
		{"max_sessions_negative_exponent", `{"max_sessions":100e-2}`, "max_sessions", []string{`"max_sessions"`, "integer"}},
		{"max_sessions_minus_zero", `{"max_sessions":-0}`, "max_sessions", []string{`"max_sessions"`, "integer"}},
		{"ttl_float_integral", `{"session_ttl_seconds":60.0}`, "session_ttl_seconds", []string{`"session_ttl_seconds"`, "60.0", "integer"}},
		{"mint_as_string_false", `{"mint_cursors":"false"}`, "mint_cursors", []string{`"mint_cursors"`, `"false"`, "true or false"}},
		{"mint_null", `{"mint_cursors":null}`, "mint_cursors", []string{`"mint_cursors"`, "null", "true or false"}},
		{"mint_zero", `{"mint_cursors":0}`, "mint_cursors", []string{`"mint_cursors"`, "true or false"}},
		{"principal_null", `{"principal_header":null}`, "principal_header", []string{`"principal_header"`, "null"}},
		{"principal_bool", `{"principal_header":false}`, "principal_header", []string{`"principal_header"`, "lower-case"}},
		{"route_name_null", `{"routes":[{"route_name":null,"transport":"http"}]}`, "routes/0/route_name", []string{"routes[0].route_name", "must be a string"}},
		{"route_transport_null", `{"routes":[{"route_name":"mcp","transport":null}]}`, "routes/0/transport", []string{"routes[0].transport", `"sse" or "http"`, "null"}},
		{"route_null", `{"routes":[null]}`, "routes/0", []string{"routes[0]", "must be an object", "null"}},

		{"unknown_key", `{"max_session":10}`, "max_session", []string{`"max_session"`, "unknown key", allKeys}},
		{"unknown_key_case", `{"Routes":[]}`, "Routes", []string{`"Routes"`, allKeys}},
		{"unknown_key_after_good_ones", `{"max_sessions":10,"bogus":1}`, "bogus", []string{`"bogus"`, allKeys}},
		{"duplicate_key", `{"max_sessions":10,"max_sessions":20}`, "max_sessions (second)", []string{`"max_sessions"`, "twice"}},
		{"duplicate_key_same_value", `{"unacked_cursor":"rewind","unacked_cursor":"rewind"}`, "unacked_cursor (second)", []string{`"unacked_cursor"`, "twice"}},

		{"bad_enum_untagged", `{"untagged_cursor":"allow"}`, "untagged_cursor", []string{`"untagged_cursor"`, `"allow"`, "reinit, passthrough"}},
		{"bad_enum_unacked", `{"unacked_cursor":"ignore"}`, "unacked_cursor", []string{`"unacked_cursor"`, `"ignore"`, "reinit, rewind, observe"}},
		{"bad_enum_scope", `{"unacked_scope":"responses,notifications"}`, "unacked_scope", []string{`"unacked_scope"`, "responses, all"}},
		{"bad_enum_replay", `{"upstream_replay":"Inclusive"}`, "upstream_replay", []string{`"upstream_replay"`, `"Inclusive"`, "exclusive, inclusive"}},
		{"bad_enum_unknown", `{"unknown_cursor":"drop"}`, "unknown_cursor", []string{`"unknown_cursor"`, "forward, reinit"}},
		{"bad_enum_legacy", `{"legacy_reinit":"drop-cursor"}`, "legacy_reinit", []string{`"legacy_reinit"`, "reply, drop_cursor"}},
		{"bad_enum_empty", `{"unacked_cursor":""}`, "unacked_cursor", []string{`"unacked_cursor"`, "reinit, rewind, observe"}},
		{"enum_number", `{"unacked_cursor":1}`, "unacked_cursor", []string{`"unacked_cursor"`, "1 is not one of", "reinit, rewind, observe"}},
		{"enum_bool", `{"untagged_cursor":true}`, "untagged_cursor", []string{`"untagged_cursor"`, "true", "reinit, passthrough"}},
		{"enum_null", `{"unacked_scope":null}`, "unacked_scope", []string{`"unacked_scope"`, "null", "responses, all"}},
		{"enum_list", `{"upstream_replay":["inclusive"]}`, "upstream_replay", []string{`"upstream_replay"`, "exclusive, inclusive"}},
		{"enum_object", `{"legacy_reinit":{"reply":true}}`, "legacy_reinit", []string{`"legacy_reinit"`, "reply, drop_cursor"}},

		{"max_sessions_zero", `{"max_sessions":0}`, "max_sessions", []string{`"max_sessions"`, "integer from 1 to 1000000"}},
		{"max_sessions_negative", `{"max_sessions":-5}`, "max_sessions", []string{`"max_sessions"`, "-5", "1 to 1000000"}},
		{"max_sessions_too_big", `{"max_sessions":1000001}`, "max_sessions", []string{`"max_sessions"`, "1000001", "1 to 1000000"}},
		{"max_sessions_huge", `{"max_sessions":99999999999999999999999}`, "max_sessions", []string{`"max_sessions"`, "1 to 1000000"}},
		{"max_sessions_fraction", `{"max_sessions":10.5}`, "max_sessions", []string{`"max_sessions"`, "10.5", "integer"}},
		{"max_sessions_float_integral", `{"max_sessions":10.0}`, "max_sessions", []string{`"max_sessions"`, "integer"}},
		{"max_sessions_exponent", `{"max_sessions":1e3}`, "max_sessions", []string{`"max_sessions"`, "integer"}},
		{"max_sessions_string", `{"max_sessions":"100"}`, "max_sessions", []string{`"max_sessions"`, `"100"`, "integer from 1 to 1000000"}},
		{"max_sessions_null", `{"max_sessions":null}`, "max_sessions", []string{`"max_sessions"`, "integer"}},
		{"ttl_zero", `{"session_ttl_seconds":0}`, "session_ttl_seconds", []string{`"session_ttl_seconds"`, "integer from 1 to 604800"}},
		{"ttl_too_big", `{"session_ttl_seconds":604801}`, "session_ttl_seconds", []string{`"session_ttl_seconds"`, "1 to 604800"}},
		{"ttl_bool", `{"session_ttl_seconds":true}`, "session_ttl_seconds", []string{`"session_ttl_seconds"`, "integer"}},
		{"line_too_small", `{"max_line_bytes":63}`, "max_line_bytes", []string{`"max_line_bytes"`, "integer from 64 to 1048576"}},
		{"line_too_big", `{"max_line_bytes":1048577}`, "max_line_bytes", []string{`"max_line_bytes"`, "64 to 1048576"}},
		{"line_list", `{"max_line_bytes":[8192]}`, "max_line_bytes", []string{`"max_line_bytes"`, "integer"}},

		{"routes_object", `{"routes":{"route_name":"a","transport":"sse"}}`, "routes", []string{`"routes"`, "must be a list", "an object", "route_name", "path_prefix", "transport"}},
		{"routes_string", `{"routes":"mcp"}`, "routes", []string{`"routes"`, "must be a list", "a string"}},
		{"routes_null", `{"routes":null}`, "routes", []string{`"routes"`, "must be a list", "null"}},
		{"route_not_object", `{"routes":["mcp"]}`, "routes/0", []string{"routes[0]", "must be an object", "a string", "transport"}},
		{"route_without_transport", `{"routes":[{"route_name":"mcp"}]}`, "routes/0", []string{"routes[0]", `"transport"`, "required", `"sse" or "http"`}},
		{"route_bad_transport", `{"routes":[{"route_name":"mcp","transport":"streamable"}]}`, "routes/0/transport", []string{"routes[0].transport", `"sse" or "http"`, `"streamable"`}},
		{"route_transport_none", `{"routes":[{"route_name":"mcp","transport":"none"}]}`, "routes/0/transport", []string{"routes[0].transport", `"sse" or "http"`}},
		{"route_transport_number", `{"routes":[{"route_name":"mcp","transport":1}]}`, "routes/0/transport", []string{"routes[0].transport", `"sse" or "http"`, "got 1"}},
		{"route_without_name_or_prefix", `{"routes":[{"transport":"sse"}]}`, "routes/0", []string{"routes[0]", `"route_name"`, `"path_prefix"`}},
		{"route_with_empty_name_and_prefix", `{"routes":[{"route_name":"","path_prefix":"","transport":"sse"}]}`, "routes/0", []string{"routes[0]", `"route_name"`, `"path_prefix"`}},
		{"route_unknown_key", `{"routes":[{"route":"mcp","transport":"http"}]}`, "routes/0/route", []string{"routes[0]", `"route"`, "unknown key", "route_name, path_prefix, transport"}},
		{"route_duplicate_key", `{"routes":[{"path_prefix":"/a","transport":"sse","transport":"http"}]}`, "routes/0/transport (second)", []string{"routes[0]", `"transport"`, "twice"}},
		{"mint_as_string", `{"mint_cursors":"true"}`, "mint_cursors", []string{`"mint_cursors"`, "true or false"}},
		{"mint_as_number", `{"mint_cursors":1}`, "mint_cursors", []string{`"mint_cursors"`, "true or false"}},
		{"principal_upper", `{"principal_header":"Authorization"}`, "principal_header", []string{`"principal_header"`, "lower-case"}},
		{"principal_number", `{"principal_header":7}`, "principal_header", []string{`"principal_header"`, "lower-case"}},
		{"route_second_entry_bad", `{"routes":[{"path_prefix":"/a","transport":"sse"},{"path_prefix":"b","transport":"http"}]}`, "routes/1/path_prefix", []string{"routes[1].path_prefix", `"/"`, `"b"`}},
		{"route_prefix_without_slash", `{"routes":[{"path_prefix":"mcp","transport":"http"}]}`, "routes/0/path_prefix", []string{"routes[0].path_prefix", `start with "/"`, `"mcp"`}},
		{"route_name_not_string", `{"routes":[{"route_name":7,"transport":"http"}]}`, "routes/0/route_name", []string{"routes[0].route_name", "must be a string"}},
		{"route_prefix_not_string", `{"routes":[{"path_prefix":["/"],"transport":"http"}]}`, "routes/0/path_prefix", []string{"routes[0].path_prefix", "must be a string"}},
		{"route_name_too_long", `{"routes":[{"route_name":"` + strings.Repeat("r", 1025) + `","transport":"http"}]}`, "routes/0/route_name", []string{"routes[0].route_name", "at most 1024 bytes"}},

		{"unwind_string", `{"unwind":"true"}`, "unwind", []string{`"unwind"`, `"true"`, "true or false"}},
		{"unwind_null", `{"unwind":null}`, "unwind", []string{`"unwind"`, "true or false"}},
		// What unwind contradicts, named at the key to change, with why.
		{"unwind_with_untagged_reinit", `{"unwind":true,"untagged_cursor":"reinit"}`, "untagged_cursor",
			[]string{`key "untagged_cursor": "reinit" refuses exactly the cursors the upstream mints while "unwind" is true`, "every new cursor is untagged", "remove untagged_cursor", "set unwind to false"}},
		{"unwind_after_untagged_reinit", `{"untagged_cursor":"reinit","unwind":true}`, "untagged_cursor", []string{`"reinit" refuses`}},
		{"unwind_with_minting", `{"mint_cursors":true,"unwind":true}`, "mint_cursors",
			[]string{`key "mint_cursors": true mints cursors`, `"unwind" is true the guard tags no event ID`, "remove mint_cursors"}},
		{"unwind_with_unknown_reinit", `{"unwind":true,"unknown_cursor":"reinit"}`, "unknown_cursor",
			[]string{`key "unknown_cursor": "reinit" refuses every tagged cursor`, "remove unknown_cursor"}},
		// A bad value is its own error, not also a contradiction of unwind.
		{"unwind_with_bad_untagged", `{"unwind":true,"untagged_cursor":"bogus"}`, "untagged_cursor", []string{`"bogus" is not one of reinit, passthrough`}},
		{"too_many_routes", `{"routes":[` + strings.TrimSuffix(strings.Repeat(`{"path_prefix":"/","transport":"sse"},`, 257), ",") + `]}`, "routes", []string{`"routes"`, "257", "at most 256"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			first := firstError(t, tc.in, err)
			if at := pathOf(first); at != tc.at {
				t.Errorf("error %q is at %q, want %q", first.Message, at, tc.at)
			}
			for _, w := range tc.want {
				if !strings.Contains(first.Message, w) {
					t.Errorf("message %q does not mention %q", first.Message, w)
				}
			}
		})
	}
}

// firstError returns the first of the Errors Parse(in) returned as err,
// after checking their texts: "config: " and the message, one a line.
func firstError(t *testing.T, in string, err error) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("Parse(%.200s) succeeded, want an error", in)
	}
	var es Errors
	if !errors.As(err, &es) || len(es) == 0 {
		t.Fatalf("Parse(%.200s) = %T %v, want a non-empty Errors", in, err, err)
	}
	var lines []string
	for _, e := range es {
		if e.Error() != "config: "+e.Message {
			t.Errorf("Error() = %q, want \"config: \" and the message %q", e.Error(), e.Message)
		}
		lines = append(lines, e.Error())
	}
	if err.Error() != strings.Join(lines, "\n") {
		t.Errorf("Errors.Error() = %q, want each error's text, one a line", err.Error())
	}
	var one *Error
	if !errors.As(err, &one) || one != es[0] {
		t.Errorf("errors.As(err, *Error) = %v, want the first error", one)
	}
	return es[0]
}

// pathOf is e's Path joined by "/", and " (second)" when it is about a
// key's second occurrence.
func pathOf(e *Error) string {
	s := strings.Join(e.Path, "/")
	if e.Duplicate {
		s += " (second)"
	}
	return s
}

// TestParseEveryError: Parse reports every top-level key and every routes
// entry that is wrong, in the order of the input, each at its path; a
// routes entry by its first fault, a repeated key once, at its second
// occurrence.
func TestParseEveryError(t *testing.T) {
	in := `{"routes":[{"path_prefix":"mcp","transport":"grpc"},{"path_prefix":"/ok","transport":"http"},{"transport":"sse"}],` +
		`"max_sessions":0,"bogus":1,"max_sessions":5,"unacked_cursor":"rewind","max_sessions":6}`
	_, err := Parse([]byte(in))
	firstError(t, in, err)
	var es Errors
	errors.As(err, &es)
	want := []struct{ at, msg string }{
		{"routes/0/transport", `routes[0].transport must be "sse" or "http", got "grpc"`},
		{"routes/2", `routes[2]: set "route_name", "path_prefix" or both, or the entry matches nothing`},
		{"max_sessions", `key "max_sessions": 0 is not an integer from 1 to 1000000`},
		{"bogus", `unknown key "bogus"; allowed keys: ` + strings.Join(Keys, ", ")},
		{"max_sessions (second)", `key "max_sessions" appears twice`},
	}
	if len(es) != len(want) {
		t.Fatalf("Parse(%s) found %d errors, want %d:\n%v", in, len(es), len(want), err)
	}
	for i, w := range want {
		if pathOf(es[i]) != w.at || es[i].Message != w.msg {
			t.Errorf("error %d = %q at %q, want %q at %q", i, es[i].Message, pathOf(es[i]), w.msg, w.at)
		}
	}
}

// TestParseEveryKeyHasAnError: every documented key rejects a value of the
// wrong type with an error naming it; a new key cannot slip in unchecked.
func TestParseEveryKeyHasAnError(t *testing.T) {
	for _, k := range Keys {
		in := fmt.Sprintf(`{%q:{"x":1}}`, k)
		_, err := Parse([]byte(in))
		if err == nil {
			t.Errorf("key %q accepts an object", k)
			continue
		}
		if !strings.Contains(err.Error(), `"`+k+`"`) {
			t.Errorf("error for key %q does not name it: %v", k, err)
		}
	}
}

func TestMatch(t *testing.T) {
	c, err := Parse([]byte(`{"routes":[
		{"route_name":"mcp-legacy","path_prefix":"/sse","transport":"sse"},
		{"route_name":"mcp-legacy","transport":"http"},
		{"path_prefix":"/messages","transport":"sse"},
		{"path_prefix":"/mcp","transport":"http"},
		{"path_prefix":"/","route_name":"catch","transport":"sse"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		route, path string
		want        cursor.Transport
	}{
		// Both fields set: both must match.
		{"mcp-legacy", "/sse", cursor.TransportSSE},
		{"mcp-legacy", "/sse?x=1", cursor.TransportSSE},
		// Name matches, prefix does not: the next entry (name only) wins.
		{"mcp-legacy", "/other", cursor.TransportHTTP},
		// Prefix matches, name does not: not the first entry.
		{"other", "/sse", cursor.TransportNone},
		{"", "/sse", cursor.TransportNone},
		// First match wins: /messages under route mcp-legacy is the name-only entry.
		{"mcp-legacy", "/messages", cursor.TransportHTTP},
		{"any", "/messages?sessionId=s-77", cursor.TransportSSE},
		{"any", "/mcp", cursor.TransportHTTP},
		// A prefix matches whole path segments (Envoy's path_separated_prefix).
		{"any", "/mcpx", cursor.TransportNone},
		{"any", "/mcp-anything", cursor.TransportNone},
		{"any", "/mcp/", cursor.TransportHTTP},
		{"any", "/mcp/sub", cursor.TransportHTTP},
		{"any", "/mcp?x=1", cursor.TransportHTTP},
		{"any", "/mcp#f", cursor.TransportHTTP},
		{"any", "/messagesX?sessionId=s", cursor.TransportNone},
		{"catch", "/mcpx", cursor.TransportSSE}, // "/" matches every path
		{"any", "/MCP", cursor.TransportNone},
		{"catch", "/anything", cursor.TransportSSE},
		{"catch", "/mcp", cursor.TransportHTTP},
		{"catch", "", cursor.TransportNone},
		// No route: untouched.
		{"", "", cursor.TransportNone},
		{"unlisted", "/health", cursor.TransportNone},
	}
	for _, tc := range cases {
		if got := c.Match(tc.route, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.route, tc.path, got, tc.want)
		}
	}
}

func TestPathHasPrefix(t *testing.T) {
	for _, tc := range []struct {
		path, prefix string
		want         bool
	}{
		{"/mcp", "/mcp", true},
		{"/mcp/", "/mcp", true},
		{"/mcp/a/b", "/mcp", true},
		{"/mcp?sessionId=1", "/mcp", true},
		{"/mcp#x", "/mcp", true},
		{"/mcp-anything", "/mcp", false},
		{"/mcpfoo", "/mcp", false},
		{"/mc", "/mcp", false},
		{"/MCP", "/mcp", false},
		{"", "/mcp", false},
		{"/anything", "/", true},
		{"/api/x", "/api/", true},
		{"/api", "/api/", false},
		{"/messages/?session_id=1", "/messages", true},
		{"/messages/?session_id=1", "/messages/", true},
		{"/message?sessionId=1", "/messages", false},
		{"/messages?sessionId=1", "/message", false},
	} {
		if got := PathHasPrefix(tc.path, tc.prefix); got != tc.want {
			t.Errorf("PathHasPrefix(%q, %q) = %v, want %v", tc.path, tc.prefix, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { PathHasPrefix("/mcp?sessionId=s-77", "/mcp") }); n != 0 {
		t.Errorf("PathHasPrefix allocates %v times a call", n)
	}
}

func TestNeedsRouteName(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		{`{}`, false},
		{`{"routes":[{"path_prefix":"/mcp","transport":"http"}]}`, false},
		{`{"routes":[{"path_prefix":"/mcp","transport":"http"},{"route_name":"r","transport":"sse"}]}`, true},
	}
	for _, tc := range cases {
		c, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.NeedsRouteName(); got != tc.want {
			t.Errorf("%s: NeedsRouteName = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestParseCopiesStrings: the configuration keeps no reference to its input,
// which the plugin reads from a host buffer reused after the callback.
func TestParseCopiesStrings(t *testing.T) {
	data := []byte(`{"routes":[{"route_name":"mcp","path_prefix":"/mcp","transport":"http"}],"principal_header":"x-sub"}`)
	c, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 'X'
	}
	if r := c.Routes[0]; r.RouteName != "mcp" || r.PathPrefix != "/mcp" || c.PrincipalHeader != "x-sub" {
		t.Fatalf("configuration changed with its input: %+v", c)
	}
}

// FuzzParse: Parse never panics, what it accepts is a configuration the
// plugin can run with, and encoding/json reads the same configuration from
// it: a JSON object of allowed keys, each once, with values of their types.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"", "{}", "[]", "null", `{"routes":[{"route_name":"mcp","path_prefix":"/mcp","transport":"http"}]}`,
		`{"untagged_cursor":"passthrough","unacked_cursor":"rewind","unacked_scope":"all","upstream_replay":"inclusive"}`,
		`{"max_sessions":10,"session_ttl_seconds":60,"max_line_bytes":64}`,
		`{"routes":[{"transport":"sse","transport":"http","path_prefix":"/"}]}`,
		`{"max_sessions":1e3}`, `{"a":`, `{"routes":[[[[[]]]]]}`, "{\"\xff\":1}",
		`{"mint_cursors":false,"principal_header":"x-jwt-sub","legacy_reinit":"drop_cursor","unknown_cursor":"reinit"}`,
		`{"unwind":true,"untagged_cursor":"passthrough"}`, `{"unwind":true,"mint_cursors":true}`,
		`{"max\u005fsessions":"10"}`, `{"routes":[{"route_name":"a\ud800b","transport":"sse"}]}`, "\xef\xbb\xbf{}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("error without the config: prefix: %v", err)
			}
			return
		}
		if strings.Trim(string(data), " \t\r\n") != "" {
			checkAsEncodingJSON(t, data, c)
		}
		if c.MaxSessions < 1 || c.MaxSessions > MaxMaxSessions ||
			c.SessionTTLSeconds < 1 || c.SessionTTLSeconds > MaxSessionTTL ||
			c.MaxLineBytes < MinMaxLineBytes || c.MaxLineBytes > MaxMaxLineBytes {
			t.Fatalf("accepted out-of-range numbers: %+v", c)
		}
		p := c.Policy
		if c.Unwind && (p.Untagged != cursor.UntaggedPassthrough || p.Minting || p.Unknown != cursor.UnknownForward) {
			t.Fatalf("accepted unwind with untagged or unknown cursors refused, or minting on: %+v", c)
		}
		if p.Untagged > cursor.UntaggedPassthrough || p.Unacked > cursor.UnackedObserve || p.Scope > cursor.ScopeAll ||
			p.Replay > cursor.ReplayInclusive || p.Unknown > cursor.UnknownReinit || c.LegacyReinit > LegacyDropCursor {
			t.Fatalf("accepted an out-of-range policy: %+v", c)
		}
		for i, r := range c.Routes {
			if r.Transport != cursor.TransportSSE && r.Transport != cursor.TransportHTTP {
				t.Fatalf("routes[%d] has transport %v", i, r.Transport)
			}
			if r.RouteName == "" && r.PathPrefix == "" {
				t.Fatalf("routes[%d] matches nothing", i)
			}
			if r.PathPrefix != "" && r.PathPrefix[0] != '/' {
				t.Fatalf("routes[%d] prefix %q", i, r.PathPrefix)
			}
		}
		// Parsing is deterministic.
		c2, err := Parse(data)
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("second Parse differs: %v", err)
		}
	})
}

// checkAsEncodingJSON reads data, which Parse accepted as c, with
// encoding/json: it must be one JSON object in UTF-8 whose keys are allowed
// and appear once, whose numbers are integers, and whose values are those
// of c.
func checkAsEncodingJSON(t *testing.T, data []byte, c Config) {
	t.Helper()
	if !json.Valid(data) || !utf8.Valid(data) {
		t.Fatalf("Parse accepted %q, which encoding/json does not read as JSON in UTF-8", data)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		t.Fatalf("Parse accepted %q, which is not a JSON object: %v", data, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.Token() // the object's '{'
	n := 0
	for dec.More() {
		tok, _ := dec.Token()
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(Keys, tok.(string)) {
			t.Fatalf("Parse accepted %q with the key %q", data, tok)
		}
		n++
	}
	if n != len(obj) {
		t.Fatalf("Parse accepted %q, which repeats a key", data)
	}
	want := with(func(w *Config) {
		w.Policy, w.LegacyReinit = c.Policy, c.LegacyReinit // enums: checked by the table tests
		w.Policy.Minting = Default().Policy.Minting         // not an enum: decoded below when present
		for key, raw := range obj {
			var err error
			switch key {
			case "max_sessions":
				err = decodeInt(raw, &w.MaxSessions)
			case "session_ttl_seconds":
				err = decodeInt(raw, &w.SessionTTLSeconds)
			case "max_line_bytes":
				err = decodeInt(raw, &w.MaxLineBytes)
			case "mint_cursors":
				err = json.Unmarshal(raw, &w.Policy.Minting)
			case "unwind":
				err = json.Unmarshal(raw, &w.Unwind)
			case "principal_header":
				err = json.Unmarshal(raw, &w.PrincipalHeader)
			case "routes":
				var routes []struct {
					RouteName  string `json:"route_name"`
					PathPrefix string `json:"path_prefix"`
					Transport  string `json:"transport"`
				}
				err = json.Unmarshal(raw, &routes)
				w.Routes = []Route{}
				for _, r := range routes {
					tr, _ := cursor.ParseTransport(r.Transport)
					w.Routes = append(w.Routes, Route{RouteName: r.RouteName, PathPrefix: r.PathPrefix, Transport: tr})
				}
			default:
				var s string
				err = json.Unmarshal(raw, &s)
			}
			if err != nil || bytes.Equal(raw, []byte("null")) {
				t.Fatalf("Parse accepted %q, but encoding/json reads %q as %s: %v", data, key, raw, err)
			}
		}
		if w.Unwind {
			w.Policy.Minting = false // unwind turns minting off
		}
	})
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("Parse(%q) =\n %+v\nencoding/json reads\n %+v", data, c, want)
	}
}

// decodeInt decodes a JSON number written as an integer.
func decodeInt(raw json.RawMessage, dst *int) error {
	if bytes.ContainsAny(raw, ".eE") {
		return errors.New("not an integer")
	}
	return json.Unmarshal(raw, dst)
}
