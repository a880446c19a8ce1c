package trial

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

func TestSessionTag(t *testing.T) {
	if got := sessionTag(""); got != NoSession {
		t.Errorf("sessionTag(\"\") = %q, want %q", got, NoSession)
	}
	if got := sessionTag("s-1"); got != cursor.SessionTag("s-1") || len(got) != 8 {
		t.Errorf("sessionTag(s-1) = %q; want cursor.SessionTag's 8 hex digits %q", got, cursor.SessionTag("s-1"))
	}
	for uri, want := range map[string]string{
		"/messages?sessionId=a":   "a",
		"/messages/?session_id=b": "b",
		"/mcp":                    "",
	} {
		if got := requestSession(http.Header{}, uri); got != want {
			t.Errorf("requestSession(%s) = %q, want %q", uri, got, want)
		}
	}
	if got := requestSession(http.Header{"Mcp-Session-Id": {"h"}}, "/messages?sessionId=q"); got != "h" {
		t.Errorf("Mcp-Session-Id loses to the query: %q", got)
	}
}

func TestDecide(t *testing.T) {
	minted := "http:~1r5.4.abc_76" // abc_7, a result, after abc_6
	for _, tc := range []struct {
		in, out   string
		forwarded bool
		reason    string
		want      string
	}{
		{"", "", true, "", DecisionForward},
		{"", "", false, "", DecisionForward},
		{"http:e-1", "e-1", true, "", DecisionStripped},
		{"sse:e-1", "e-1", true, "", DecisionStripped},
		{minted, "abc_7", true, "", DecisionStripped},
		{minted, "abc_6", true, "", DecisionRewound},
		{"http:e-2", "e-1", true, "", DecisionRewound},
		{"e-1", "e-1", true, "", DecisionForward}, // untagged_cursor: passthrough, or an unguarded route
		{"sse:e-1", "", true, "", "reinit:" + ReasonCursorDropped},
		{"sse:e-104", "", false, "cross_transport", "reinit:cross_transport"},
	} {
		if got := decide(tc.in, tc.out, tc.forwarded, tc.reason); got != tc.want {
			t.Errorf("decide(%q, %q, %t, %q) = %q, want %q", tc.in, tc.out, tc.forwarded, tc.reason, got, tc.want)
		}
	}
}

// TestRequestLine: every request line names the session (none without
// one), the plugin's decision and whether it was a resume.
func TestRequestLine(t *testing.T) {
	s, logs := startEnvoyConfigured(t, "", "")
	get(t, "http://"+s.ProxyAddr+"/")
	get(t, "http://"+s.ProxyAddr+"/mcp", "Accept", "text/event-stream", "Mcp-Session-Id", "s-77", "Last-Event-ID", "sse:e-104")
	get(t, "http://"+s.ProxyAddr+"/mcp", "Accept", "text/event-stream", "Mcp-Session-Id", "s-78", "Last-Event-ID", "http:e-1")
	for _, want := range []string{
		`msg=request method=GET path=/ status=200 `,
		`route=passthrough end=complete session=none decision=forward resume=false`,
		`route=mcp-streamable end=complete session=` + cursor.SessionTag("s-77") + ` decision=reinit:cross_transport resume=true`,
		`route=mcp-streamable end=complete session=` + cursor.SessionTag("s-78") + ` decision=stripped resume=true`,
		`msg="forced re-initialization" reason=cross_transport method=GET path=/mcp session=` + cursor.SessionTag("s-77") + ` `,
	} {
		if !logs.WaitFor(want, 2*time.Second) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if n := strings.Count(logs.String(), "msg=request "); n != 3 {
		t.Errorf("%d request lines for 3 requests (the host's own must not be logged too):\n%s", n, logs)
	}
}

// TestSDKEndpointsGuarded: the official SDKs' legacy message endpoints
// (TypeScript /message?sessionId=..., Python /messages/?session_id=...) take
// a guarded route in envoy.yaml's route table and in paths.json's.
func TestSDKEndpointsGuarded(t *testing.T) {
	for _, pluginConfig := range []string{"", pathsFile} {
		s, _ := startEnvoyConfigured(t, pluginConfig, "")
		for _, path := range []string{"/message", "/messages/", "/messages", "/sse", "/mcp"} {
			if !s.guards(path) {
				t.Errorf("config %q: %s is not guarded", pluginConfig, path)
			}
		}
		if s.guards("/") {
			t.Errorf("config %q: / is guarded", pluginConfig)
		}
	}
}

// TestEndpointWarning: a legacy server whose endpoint event names a path
// the proxy does not guard gets one warning, however many streams name it;
// one on a guarded path (the TypeScript SDK's /message) gets none.
func TestEndpointWarning(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		endpoint := "/message?sessionId=ts-1"
		if r.URL.Query().Get("server") == "custom" {
			endpoint = "http://" + r.Host + "/rpc?sessionId=c-1"
		}
		// CR LF line ends, as sse-starlette writes them.
		fmt.Fprintf(w, "event: endpoint\r\ndata: %s\r\n\r\n", endpoint)
	}))
	defer up.Close()
	s, logs := startEnvoyConfigured(t, "", up.URL)
	for _, q := range []string{"", "?server=custom", "?server=custom"} {
		resp, body := get(t, "http://"+s.ProxyAddr+"/sse"+q)
		if resp.StatusCode != 200 || !strings.Contains(body, "event: endpoint") {
			t.Fatalf("GET /sse%s: %d %q", q, resp.StatusCode, body)
		}
	}
	const warning = "names a path the proxy does not guard"
	if !logs.WaitFor(warning, 2*time.Second) {
		t.Fatalf("no warning for the unguarded endpoint /rpc:\n%s", logs)
	}
	if n := strings.Count(logs.String(), warning); n != 1 || !strings.Contains(logs.String(), "path=/rpc ") {
		t.Errorf("%d warnings, want one naming path=/rpc:\n%s", n, logs)
	}
}

func TestEndpointWatcherSplitsChunks(t *testing.T) {
	var got []string
	w := &endpointWatcher{found: func(d string) { got = append(got, d) }}
	for _, chunk := range []string{": ok\r", "\nevent: endp", "oint\r", "\ndata: /messages/?session_id=", "x\r\n\r\n", "event: endpoint\ndata: /again\n\n"} {
		w.scan([]byte(chunk))
	}
	if len(got) != 1 || got[0] != "/messages/?session_id=x" {
		t.Errorf("endpoint events found: %q", got)
	}
}
