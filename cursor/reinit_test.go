package cursor

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestReinitBody: every body is the JSON-RPC error the issue specifies, with
// the reason's wire name in error.data.reason.
func TestReinitBody(t *testing.T) {
	if ReinitStatus != 404 || ReinitCode != -32001 {
		t.Fatalf("status %d, code %d; MCP clients re-initialize on 404, the issue fixes -32001", ReinitStatus, ReinitCode)
	}
	for r := ReasonNoCursor; r <= ReasonTombstoned+1; r++ {
		b := ReinitBody(r)
		var body struct {
			JSONRPC string           `json:"jsonrpc"`
			ID      *json.RawMessage `json:"id"`
			Error   struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Data    struct {
					Reason string `json:"reason"`
				} `json:"data"`
			} `json:"error"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			t.Fatalf("ReinitBody(%v) = %s: not the expected JSON: %v", r, b, err)
		}
		if body.JSONRPC != "2.0" || body.ID != nil || !bytes.Contains(b, []byte(`"id":null`)) {
			t.Errorf("ReinitBody(%v): jsonrpc %q, id %v", r, body.JSONRPC, body.ID)
		}
		if body.Error.Code != ReinitCode {
			t.Errorf("ReinitBody(%v): code %d", r, body.Error.Code)
		}
		if body.Error.Data.Reason != r.String() {
			t.Errorf("ReinitBody(%v): data.reason %q, want %q", r, body.Error.Data.Reason, r.String())
		}
		if got := ReinitReason(b); got != r.String() {
			t.Errorf("ReinitReason(ReinitBody(%v)) = %q", r, got)
		}
		if !strings.Contains(body.Error.Message, "initialize") {
			t.Errorf("ReinitBody(%v): message %q does not tell the client to initialize", r, body.Error.Message)
		}
	}
	// The reinit reasons of the issue each have their own message.
	seen := map[string]Reason{}
	for _, r := range []Reason{ReasonCrossTransport, ReasonUntagged, ReasonDrainRace, ReasonTombstoned, ReasonUnknown} {
		var body struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(ReinitBody(r), &body)
		if prev, dup := seen[body.Error.Message]; dup {
			t.Errorf("reasons %v and %v share the message %q", prev, r, body.Error.Message)
		}
		seen[body.Error.Message] = r
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"` + reinitMessages[ReasonCrossTransport] +
		`","data":{"reason":"cross_transport"}}}`
	if got := string(ReinitBody(ReasonCrossTransport)); got != want {
		t.Errorf("ReinitBody(cross_transport) =\n%s\nwant\n%s", got, want)
	}
}

// TestReinitReasonOfOtherBodies: a body that is not a re-initialization has
// no reason.
func TestReinitReasonOfOtherBodies(t *testing.T) {
	for _, b := range []string{"", "not json", `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"error":{"data":{"reason":7}}}`} {
		if got := ReinitReason([]byte(b)); got != "" {
			t.Errorf("ReinitReason(%q) = %q, want none", b, got)
		}
	}
}
