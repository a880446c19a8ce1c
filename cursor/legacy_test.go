package cursor

import (
	"net/url"
	"strings"
	"testing"
)

// TestQueryUnescape holds queryUnescape to url.QueryUnescape, which the
// plugin does not import.
func TestQueryUnescape(t *testing.T) {
	for _, s := range []string{"", "abc", "a+b", "a%20b", "%41%62", "%e2%82%AC", "%", "%4", "%4g", "a%zz", "100%", "%%41", "+%2B+"} {
		want, werr := url.QueryUnescape(s)
		got, ok := queryUnescape(s)
		if ok != (werr == nil) || (ok && got != want) {
			t.Errorf("queryUnescape(%q) = %q, %v; url.QueryUnescape: %q, %v", s, got, ok, want, werr)
		}
	}
}

// TestQuerySession: the session a query names, and whether it names more
// than one, as url.ParseQuery would read sessionId and session_id.
func TestQuerySession(t *testing.T) {
	for _, c := range []struct {
		path, session string
		ambiguous     bool
	}{
		{"/messages", "", false},
		{"/messages?", "", false},
		{"/messages?sessionId=abc", "abc", false},
		{"/messages/?session_id=4f2a", "4f2a", false},
		{"/messages?x=1&sessionId=a%2Bb+c#frag", "a+b c", false},
		{"/messages?sessionId=abc&sessionId=abc", "abc", false},
		{"/messages?sessionId=abc&session_id=ab%63", "abc", false},
		{"/messages?sessionId=abc&sessionId=abd", "", true},
		{"/messages?session_id=abc&sessionId=", "", true},
		{"/messages?sessionId=abc&session_id=xyz&sessionId=abc", "", true},
		{"/messages?sessionid=abc&SessionId=x", "", false},
		{"/messages?sessionId", "", false},
	} {
		got, amb := QuerySession(c.path)
		if got != c.session || amb != c.ambiguous {
			t.Errorf("QuerySession(%q) = %q, %v; want %q, %v", c.path, got, amb, c.session, c.ambiguous)
		}
		if c.ambiguous {
			continue
		}
		// Not ambiguous: every value url.ParseQuery finds is the one returned.
		if _, q, ok := strings.Cut(c.path, "?"); ok {
			q, _, _ = strings.Cut(q, "#")
			v, _ := url.ParseQuery(q)
			for _, k := range []string{"sessionId", "session_id"} {
				for _, s := range v[k] {
					if s != got {
						t.Errorf("QuerySession(%q) = %q, url.ParseQuery has %s=%q", c.path, got, k, s)
					}
				}
			}
		}
	}
}

// TestLegacySessions: which session a legacy request and a legacy stream
// belong to.
func TestLegacySessions(t *testing.T) {
	for _, c := range []struct {
		method, header, path, session string
		ambiguous                     bool
	}{
		{"POST", "", "/messages?sessionId=abc", "abc", false},
		{"POST", "hdr", "/messages?sessionId=abc", "hdr", false},
		{"GET", "", "/sse?sessionId=someone-else", "", false},
		{"GET", "hdr", "/sse", "hdr", false},
		{"POST", "", "/messages?sessionId=a&sessionId=b", "", true},
		{"GET", "", "/sse?sessionId=a&session_id=b", "", true},
	} {
		s, amb := LegacyRequestSession(c.method, c.header, c.path)
		if s != c.session || amb != c.ambiguous {
			t.Errorf("LegacyRequestSession(%q, %q, %q) = %q, %v; want %q, %v", c.method, c.header, c.path, s, amb, c.session, c.ambiguous)
		}
	}
	for data, want := range map[string]string{
		"/messages?sessionId=abc": "abc", "/messages/?session_id=x%2By": "x+y",
		"/messages": "", "/messages?sessionId=a&sessionId=b": "",
	} {
		if got := EndpointSession(data); got != want {
			t.Errorf("EndpointSession(%q) = %q, want %q", data, got, want)
		}
	}
}
