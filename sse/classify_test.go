package sse

import (
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

func TestClassify(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("z", 600)
	for _, tc := range []struct {
		name      string
		typ, data string
		truncated bool
		want      cursor.EventKind
	}{
		{"response", "", respJSON, false, cursor.KindResponse},
		{"response with message type", "message", respJSON, false, cursor.KindResponse},
		{"error response", "", `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}}`, false, cursor.KindResponse},
		{"error response with null id", "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, false, cursor.KindResponse},
		{"notification", "", notifJSON, false, cursor.KindNotification},
		{"request", "", reqJSON, false, cursor.KindRequest},
		{"ping request", "", `{"jsonrpc":"2.0","id":0,"method":"ping"}`, false, cursor.KindRequest},
		{"keys in any order", "", `{"result":{},"jsonrpc":"2.0","id":1}`, false, cursor.KindResponse},
		{"leading whitespace", "", " \t\r\n" + notifJSON, false, cursor.KindNotification},
		{"nested method is not top-level", "", `{"jsonrpc":"2.0","id":1,"result":{"method":"x"}}`, false, cursor.KindResponse},
		{"nested keys only", "", `{"jsonrpc":"2.0","params":{"id":1,"result":2}}`, false, cursor.KindOther},
		{"notification mentioning error", "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"\"id\""}}`, false, cursor.KindNotification},
		{"request with escaped id key", "", `{"jsonrpc":"2.0","method":"ping","\u0069d":1}`, false, cursor.KindRequest},
		{"response with escaped result key", "", `{"jsonrpc":"2.0","method":"x","r\u0065sult":{}}`, false, cursor.KindResponse},
		{"notification with id nested after method", "", `{"method":"x","params":{"id":1}}`, false, cursor.KindNotification},
		{"request with id after method", "", `{"jsonrpc":"2.0","method":"roots/list","params":{},"id":"r1"}`, false, cursor.KindRequest},
		{"other event type", "endpoint", respJSON, false, cursor.KindOther},
		{"legacy endpoint event", "endpoint", "/messages?sessionId=abc", false, cursor.KindOther},
		{"Message is not message", "Message", respJSON, false, cursor.KindOther},
		{"plain text", "", "hello", false, cursor.KindOther},
		{"empty", "", "", false, cursor.KindOther},
		{"json string", "", `"result"`, false, cursor.KindOther},
		{"object without kind keys", "", `{"jsonrpc":"2.0"}`, false, cursor.KindOther},
		{"empty object", "", `{}`, false, cursor.KindOther},

		{"truncated response, result cut", "", big[:DataPrefixBytes], true, cursor.KindResponse},
		{"truncated response, cut inside result string", "", `{"jsonrpc":"2.0","id":3,"result":"abc`, true, cursor.KindResponse},
		{"truncated response, cut before result", "", `{"jsonrpc":"2.0","id":3,"res`, true, cursor.KindResponse},
		{"truncated response, result first (TypeScript SDK order)", "", `{"result":{"content":[{"type":"te`, true, cursor.KindResponse},
		{"truncated, nothing visible", "", `{"jsonrpc":"2.0","_meta":{"a":"`, true, cursor.KindResponse},
		{"truncated notification", "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("q", 600), true, cursor.KindNotification},
		{"truncated request", "", `{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{"messages":[`, true, cursor.KindRequest},
		{"truncated error", "", `{"jsonrpc":"2.0","id":1,"error":{"co`, true, cursor.KindResponse},
		{"same prefix complete is not a response", "", `{"jsonrpc":"2.0","_meta":{"a":"b"}}`, false, cursor.KindOther},
		{"truncated non-json", "", strings.Repeat("x", DataPrefixBytes), true, cursor.KindOther},

		{"batch of responses", "", "[" + respJSON + "," + respJSON + "]", false, cursor.KindResponse},
		{"batch with a response after a notification", "", "[" + notifJSON + "," + respJSON + "]", false, cursor.KindResponse},
		{"batch of notification then request", "", "[" + notifJSON + "," + reqJSON + "]", false, cursor.KindNotification},
		{"batch of requests", "", "[" + reqJSON + "]", false, cursor.KindRequest},
		{"empty batch", "", "[]", false, cursor.KindOther},
		{"batch of non-objects", "", "[1,2]", false, cursor.KindOther},
		{"truncated batch, response visible", "", "[" + notifJSON + "," + respJSON + "," + `{"jsonrpc":"2.0","method":"x","par`, true, cursor.KindResponse},
		{"truncated batch, cut response after a notification", "", "[" + notifJSON + `, {"jsonrpc":"2.0","id":4,"result":{"a":`, true, cursor.KindResponse},
		{"truncated batch, cut notification after a notification", "", "[" + notifJSON + `,{"jsonrpc":"2.0","method":"y","params":{`, true, cursor.KindNotification},
		{"truncated batch, only a cut element", "", `[{"jsonrpc":"2.0","id":4,"res`, true, cursor.KindResponse},
		{"truncated batch, cut between elements", "", "[" + reqJSON + ",", true, cursor.KindRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify([]byte(tc.typ), []byte(tc.data), tc.truncated); got != tc.want {
				t.Fatalf("Classify(%q, %q, %v) = %v, want %v", tc.typ, tc.data, tc.truncated, got, tc.want)
			}
		})
	}
}

func TestClassifyDoesNotAllocate(t *testing.T) {
	inputs := [][]byte{
		[]byte(respJSON), []byte(notifJSON), []byte(reqJSON),
		[]byte("[" + notifJSON + "," + respJSON + "]"),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"te\u0078t":"a\"b"}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"re`),
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, in := range inputs {
			Classify(nil, in, true)
			Classify([]byte("message"), in, false)
		}
	})
	if allocs != 0 {
		t.Fatalf("Classify allocates %v times per run", allocs)
	}
}
