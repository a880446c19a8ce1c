package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// The response-path defects of issue 22 (1, 2, 5 and 6), through both
// drivers: each test failed on the built .wasm before its fix.

// goSDKEvent is an event as the official Go SDK's reader (go-sdk v1.8.0,
// mcp/event.go) dispatches it.
type goSDKEvent struct{ name, id, data string }

// goSDKRead reads an SSE stream by the Go SDK's rules, which are not
// WHATWG's: lines end at '\n' only and lose trailing '\r's, a line without
// ':' is an error that ends the stream, field values are TrimSpace'd, and a
// pending event is dispatched at EOF, terminated or not.
func goSDKRead(t *testing.T, stream string) []goSDKEvent {
	t.Helper()
	var (
		evs  []goSDKEvent
		ev   goSDKEvent
		data []string
		have bool
	)
	yield := func() {
		if data != nil {
			ev.data = strings.Join(data, "\n")
		}
		if ev != (goSDKEvent{}) || data != nil {
			evs = append(evs, ev)
		}
		ev, data, have = goSDKEvent{}, nil, false
	}
	for _, line := range strings.SplitAfter(stream, "\n") {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			yield()
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("the Go SDK's reader fails on %q: malformed line in SSE stream %q", stream, line)
		}
		have = true
		switch name {
		case "event":
			ev.name = strings.TrimSpace(value)
		case "id":
			ev.id = strings.TrimSpace(value)
		case "data":
			data = append(data, strings.TrimSpace(value))
		}
	}
	if have {
		yield()
	}
	return evs
}

// checkGoSDKView checks that the Go SDK's reader sees in out the events of
// in, with each ID tagged on tr and reading back to the upstream's.
func checkGoSDKView(t *testing.T, tr cursor.Transport, in, out string) {
	t.Helper()
	want, got := goSDKRead(t, in), goSDKRead(t, out)
	if len(got) != len(want) {
		t.Fatalf("the Go SDK's reader sees %d events in %q, %d in the upstream's %q", len(got), out, len(want), in)
	}
	for i := range want {
		c, ok := cursor.ParseCursor(got[i].id)
		if got[i].name != want[i].name || got[i].data != want[i].data || !ok || c.Transport != tr || c.ID != want[i].id {
			t.Fatalf("event %d: the Go SDK's reader sees %+v (cursor %+v), upstream %+v", i, got[i], c, want[i])
		}
		if got[i].data != "" && !json.Valid([]byte(got[i].data)) {
			t.Fatalf("event %d: the Go SDK's client cannot decode %q", i, got[i].data)
		}
	}
}

const edgeResult = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"42"}]}}`

// TestEOFUnterminatedLastLine (issue 22, defect 1): a stream that ends
// inside its last line, the held id line was glued onto it
// ("…}}id: http:e-2"), and the Go SDK's client failed to decode the event it
// dispatches at EOF. The line is ended first with the stream's own line
// ending; the ID goes out minted.
func TestEOFUnterminatedLastLine(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"lf", "id: e-2\nevent: message\ndata: " + edgeResult,
			"event: message\ndata: " + edgeResult + "\nid: http:~1r3.0.e-2\n"},
		{"crlf", "id: e-2\r\nevent: message\r\ndata: " + edgeResult,
			"event: message\r\ndata: " + edgeResult + "\r\nid: http:~1r3.0.e-2\r\n"},
		{"last line ended, event not", "id: e-2\nevent: message\ndata: " + edgeResult + "\n",
			"event: message\ndata: " + edgeResult + "\nid: http:~1r3.0.e-2\n"},
		{"last line is the id line", "event: message\ndata: " + edgeResult + "\nid: e-2",
			"event: message\ndata: " + edgeResult + "\nid: http:~1r3.0.e-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, h *harness) {
				h.start(mintConfig)
				for _, split := range []int{len(tc.in), len(tc.in) - 5, 9} {
					s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
					out := h.sseResponse(s, tc.in[:split], tc.in[split:])
					s.end(false)
					if out != tc.want {
						t.Fatalf("split at %d: downstream %q, want %q", split, out, tc.want)
					}
					checkGoSDKView(t, cursor.TransportHTTP, tc.in, out)
				}
			})
		})
	}
	// Without minting, the last line's ID is tagged too (it went out
	// untagged, and the Go SDK client's next resume was refused).
	forEachDriver(t, func(t *testing.T, h *harness) {
		h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"mint_cursors":false}`)
		in := "event: message\ndata: " + edgeResult + "\nid: e-2"
		s, _ := h.request("POST", "/mcp", [2]string{"mcp-session-id", "s-1"})
		if out := h.sseResponse(s, in); out != strings.Replace(in, "id: e-2", "id: http:e-2", 1) {
			t.Fatalf("mint_cursors off: downstream %q", out)
		}
		s.end(false)
	})
}

// TestTruncatedBatchHidesAResult (issue 22, defect 2): a batch whose result
// follows a notification with large params is cut by the classification
// prefix; its kind was the first element's (a notification), so neither the
// tail nor the cursor caught the drain race. A truncated batch counts as a
// response.
func TestTruncatedBatchHidesAResult(t *testing.T) {
	notif := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("n", 600) + `"}}`
	errResp := `{"jsonrpc":"2.0","id":6,"error":{"code":-32000,"message":"` + strings.Repeat("e", 600) + `"}}`
	for _, tc := range []struct{ name, first string }{{"notification first", notif}, {"error first", errResp}} {
		t.Run(tc.name, func(t *testing.T) {
			batch := "id: e-2\ndata: [" + tc.first + "," + edgeResult + "]\n\n"
			forEachDriver(t, func(t *testing.T, h *harness) {
				h.start(mintConfig)
				id := mintedID(t, h.cutStream("s-1", "id: e-1\ndata: \n\n", batch))
				if c, _ := cursor.ParseCursor(id); c.Kind != cursor.KindResponse || c.ID != "e-2" || c.Prev() != "e-1" {
					t.Fatalf("batch minted %q (%+v), want a result's cursor naming e-1", id, c)
				}
				// This replica decides from its tail: a drain race, rewound.
				if r, fwd := h.resume("s-1", id); r != "" || fwd != "e-1" {
					t.Fatalf("resume from the cut batch: reason %q, forwarded %q, want a rewind to e-1", r, fwd)
				}
				if h.counter("drain_race_detected_total") != 1 {
					t.Fatal("drain race not counted")
				}
			})
		})
	}
}

// TestTildeIDsReachTheUpstreamAsSent (issue 22, defect 5): an upstream ID
// shaped like a minted cursor was tagged plain with minting off, then read
// back as minted: "~1o3.0.abc" was forwarded as "abc", and a notification's
// "~1r1.0.xy" made up a drain race from the cursor. In both phases of a
// fleet upgrade (minting off, then on) such an ID goes out escaped and
// comes back exactly as the upstream sent it.
func TestTildeIDsReachTheUpstreamAsSent(t *testing.T) {
	for _, phase := range []struct{ name, cfg string }{
		{"mint off", `{"routes":[{"path_prefix":"/mcp","transport":"http"}],"mint_cursors":false}`},
		{"mint on", mintConfig},
	} {
		t.Run(phase.name, func(t *testing.T) {
			forEachDriver(t, func(t *testing.T, h *harness) {
				h.start(phase.cfg)
				for _, id := range []string{"~1o3.0.abc", "~1r1.0.xy", "~1e2.0.ab", "~"} {
					ev := "id: " + id + "\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
					got := mintedID(t, "\n"+h.cutStream("s-1", ev))
					if c, ok := cursor.ParseCursor(got); !ok || c.ID != id || c.Kind != cursor.KindOther {
						t.Fatalf("upstream %q went out as %q, which reads back as %+v", id, got, c)
					}
					before := h.counter("drain_race_detected_total")
					if r, fwd := h.resume("s-1", got); r != "" || fwd != id {
						t.Fatalf("resume from %q: reason %q, forwarded %q, want %q", got, r, fwd, id)
					}
					if h.counter("drain_race_detected_total") != before {
						t.Fatalf("a notification's ID %q made up a drain race", id)
					}
				}
			})
		})
	}
}

// TestOverflowWhileAnIDIsHeld (issue 22, defect 6): an event type longer
// than max_line_bytes after a held id line overflowed the stream and sent
// that ID out untagged, so the client's next resume was refused. It goes out
// tagged: an event type that long is not "message", so its event carries no
// JSON-RPC message and prefix+id is its cursor.
func TestOverflowWhileAnIDIsHeld(t *testing.T) {
	long := strings.Repeat("L", 100)
	for _, tc := range []struct{ in, want string }{
		{"id: e-2\nevent: " + long + "\ndata: x\n\n", "event: " + long + "\nid: http:e-2\ndata: x\n\n"},
		// A later id line too long: it overrides the held one, which goes
		// out tagged where it starts, as without the overflow.
		{"id: e-2\ndata: x\nid: " + long + "\ndata: y\n\n", "data: x\nid: http:e-2\nid: " + long + "\ndata: y\n\n"},
	} {
		forEachDriver(t, func(t *testing.T, h *harness) {
			h.start(`{"routes":[{"path_prefix":"/mcp","transport":"http"}],"max_line_bytes":64}`)
			if out := h.cutStream("s-1", tc.in); out != tc.want {
				t.Fatalf("downstream %q, want %q", out, tc.want)
			}
			if r, fwd := h.resume("s-1", "http:e-2"); r != "" || fwd != "e-2" {
				t.Fatalf("resume from the held ID: reason %q, forwarded %q", r, fwd)
			}
		})
	}
}
