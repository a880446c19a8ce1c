package sse

import (
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// Payloads as the official SDKs write them (key order and spacing included;
// MCP-FACTS.md): the Go SDK and Python (pydantic) write "jsonrpc" and "id"
// first, the TypeScript SDK writes a result first and "jsonrpc"/"id" last.
const (
	goResult       = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"42"}],"structuredContent":{"answer":42}}}`
	goNilResult    = `{"jsonrpc":"2.0","id":7}`
	goError        = `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"invalid params: missing \"a\""}}`
	goNotification = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":3,"total":10}}`
	goRequest      = `{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`
	tsResult       = `{"result":{"content":[{"type":"text","text":"42"}],"isError":false},"jsonrpc":"2.0","id":7}`
	tsError        = `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error"}}`
	tsNotification = `{"method":"notifications/message","params":{"level":"error","data":{"id":1,"result":"x"}},"jsonrpc":"2.0"}`
	tsRequest      = `{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object"}},"jsonrpc":"2.0","id":0}`
	pyResult       = `{"jsonrpc":"2.0","id":"req-7","result":{"content":[{"type":"text","text":"42"}],"isError":false}}`
	pyError        = `{"jsonrpc":"2.0","id":"req-7","error":{"code":-32000,"message":"Tool failed"}}`
	pyNotification = `{"method":"notifications/progress","params":{"progressToken":"p-1","progress":3.0,"total":10.0},"jsonrpc":"2.0"}`
	pyRequest      = `{"jsonrpc":"2.0","id":3,"method":"roots/list"}`
	pySpaced       = `{"jsonrpc": "2.0", "id": 7, "result": {"content": []}}`
)

// bigResult is a result whose text runs past the classified prefix.
var bigResult = `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("z", 600)

// kindCase is an event of the classification table: what Classify makes of
// it.
type kindCase struct {
	name      string
	typ, data string
	truncated bool
	want      cursor.EventKind
}

// kindCases is the table Classify is tested on.
var kindCases = []kindCase{
	{"Go result", "", goResult, false, cursor.KindResponse},
	{"Go nil result (neither result nor error)", "", goNilResult, false, cursor.KindResponse},
	{"Go error", "", goError, false, cursor.KindError},
	{"Go notification", "", goNotification, false, cursor.KindNotification},
	{"Go request", "", goRequest, false, cursor.KindRequest},
	{"TypeScript result first", "", tsResult, false, cursor.KindResponse},
	{"TypeScript error", "", tsError, false, cursor.KindError},
	{"TypeScript notification with id and result inside params", "", tsNotification, false, cursor.KindNotification},
	{"TypeScript request with id last", "", tsRequest, false, cursor.KindRequest},
	{"Python result with string id", "", pyResult, false, cursor.KindResponse},
	{"Python error", "", pyError, false, cursor.KindError},
	{"Python notification", "", pyNotification, false, cursor.KindNotification},
	{"Python request without params", "", pyRequest, false, cursor.KindRequest},
	{"spaced separators", "", pySpaced, false, cursor.KindResponse},

	{"response", "", respJSON, false, cursor.KindResponse},
	{"response with message type", "message", respJSON, false, cursor.KindResponse},
	{"error with message type", "message", goError, false, cursor.KindError},
	{"error with null id", "", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, false, cursor.KindError},
	{"error without id", "", `{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse"}}`, false, cursor.KindError},
	{"null result", "", `{"jsonrpc":"2.0","id":7,"result":null}`, false, cursor.KindResponse},
	{"nil result with null id", "", `{"jsonrpc":"2.0","id":null}`, false, cursor.KindResponse},
	{"nil result, id first", "", `{"id":"x","jsonrpc":"2.0"}`, false, cursor.KindResponse},
	{"notification", "", notifJSON, false, cursor.KindNotification},
	{"request", "", reqJSON, false, cursor.KindRequest},
	{"ping request", "", `{"jsonrpc":"2.0","id":0,"method":"ping"}`, false, cursor.KindRequest},
	{"keys in any order", "", `{"result":{},"jsonrpc":"2.0","id":1}`, false, cursor.KindResponse},
	{"result decides before a later error", "", `{"id":1,"result":{},"error":{}}`, false, cursor.KindResponse},
	{"error decides before a later result", "", `{"id":1,"error":{},"result":{}}`, false, cursor.KindError},
	{"method decides before a later result", "", `{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, false, cursor.KindRequest},
	{"method decides before a later error", "", `{"method":"x","error":{"code":1}}`, false, cursor.KindNotification},
	{"result decides before a later method", "", `{"result":{},"method":"x"}`, false, cursor.KindResponse},
	{"error decides before a later method and id", "", `{"error":{},"method":"x","id":3}`, false, cursor.KindError},

	{"leading whitespace", "", " \t\r\n" + notifJSON, false, cursor.KindNotification},
	{"pretty-printed over several data lines", "", "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 7,\n  \"error\": {\n    \"code\": -1\n  }\n}", false, cursor.KindError},
	{"whitespace around colons and commas", "", "{ \"method\"\t:\r\n\"x\" , \"id\" : 2 }", false, cursor.KindRequest},
	{"nested method is not top-level", "", `{"jsonrpc":"2.0","id":1,"result":{"method":"x"}}`, false, cursor.KindResponse},
	{"nested keys only", "", `{"jsonrpc":"2.0","params":{"id":1,"result":2}}`, false, cursor.KindOther},
	{"nested result and error inside params", "", `{"jsonrpc":"2.0","method":"notifications/x","params":{"result":{},"error":{"code":1}}}`, false, cursor.KindNotification},
	{"result inside an array inside params", "", `{"method":"x","params":[{"result":1},{"id":2}]}`, false, cursor.KindNotification},
	{"notification mentioning error", "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"\"id\""}}`, false, cursor.KindNotification},
	{"key text inside a string value", "", `{"jsonrpc":"2.0","method":"x","params":{"t":"\",\"result\":{"}}`, false, cursor.KindNotification},
	{"escaped quote and backslash before a key", "", `{"method":"a\\\"b\\","id":1}`, false, cursor.KindRequest},
	{"request with escaped id key", "", `{"jsonrpc":"2.0","method":"ping","\u0069d":1}`, false, cursor.KindRequest},
	{"response with escaped result key", "", `{"jsonrpc":"2.0","r\u0065sult":{},"method":"x"}`, false, cursor.KindResponse},
	{"error with escaped error key", "", `{"jsonrpc":"2.0","id":1,"\u0065rror":{}}`, false, cursor.KindError},
	{"escaped method key", "", `{"\u006d\u0065thod":"x"}`, false, cursor.KindNotification},
	{"key with an escaped quote is another key", "", `{"method":"x","resu\"lt":{}}`, false, cursor.KindNotification},
	{"key with an escaped slash is another key", "", `{"method":"x","i\/d":1}`, false, cursor.KindNotification},
	{"keys are case-sensitive", "", `{"Method":"x","ID":1,"Result":{}}`, false, cursor.KindOther},
	{"notification with id nested after method", "", `{"method":"x","params":{"id":1}}`, false, cursor.KindNotification},
	{"request with id after method", "", `{"jsonrpc":"2.0","method":"roots/list","params":{},"id":"r1"}`, false, cursor.KindRequest},

	{"other event type", "endpoint", respJSON, false, cursor.KindOther},
	{"legacy endpoint event", "endpoint", "/messages?sessionId=abc", false, cursor.KindOther},
	{"Go priming event type", "prime", "", false, cursor.KindOther},
	{"Message is not message", "Message", respJSON, false, cursor.KindOther},
	{"plain text", "", "hello", false, cursor.KindOther},
	{"empty", "", "", false, cursor.KindOther},
	{"blank", "", " \r\n\t", false, cursor.KindOther},
	{"json string", "", `"result"`, false, cursor.KindOther},
	{"json number", "", `7`, false, cursor.KindOther},
	{"json literal", "", `null`, false, cursor.KindOther},
	{"object without kind keys", "", `{"jsonrpc":"2.0"}`, false, cursor.KindOther},
	{"empty object", "", `{}`, false, cursor.KindOther},

	{"truncated response, result cut", "", bigResult[:DataPrefixBytes], true, cursor.KindResponse},
	{"truncated response, cut inside result string", "", `{"jsonrpc":"2.0","id":3,"result":"abc`, true, cursor.KindResponse},
	{"truncated response, cut before result", "", `{"jsonrpc":"2.0","id":3,"res`, true, cursor.KindResponse},
	{"truncated response, cut inside the id string", "", `{"jsonrpc":"2.0","id":"req-`, true, cursor.KindResponse},
	{"truncated response, result first (TypeScript SDK order)", "", `{"result":{"content":[{"type":"te`, true, cursor.KindResponse},
	{"truncated batch, its last element cut", "", `[{"jsonrpc":"2.0"`, true, cursor.KindResponse},
	{"truncated batch, its last element cut after a byte gjson skips", "", `[x{"jsonrpc":"2.0"`, true, cursor.KindResponse},
	{"truncated, nothing visible", "", `{"jsonrpc":"2.0","_meta":{"a":"`, true, cursor.KindResponse},
	{"truncated notification", "", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("q", 600), true, cursor.KindNotification},
	{"truncated notification, nested result in params", "", `{"jsonrpc":"2.0","method":"n","params":{"result":{"id":`, true, cursor.KindNotification},
	{"truncated request", "", `{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{"messages":[`, true, cursor.KindRequest},
	{"truncated request, method string cut", "", `{"jsonrpc":"2.0","id":5,"method":"sampl`, true, cursor.KindResponse},
	{"truncated error", "", `{"jsonrpc":"2.0","id":1,"error":{"co`, true, cursor.KindError},
	{"truncated error, value not started", "", `{"jsonrpc":"2.0","id":1,"error":`, true, cursor.KindResponse},
	{"same prefix complete is not a response", "", `{"jsonrpc":"2.0","_meta":{"a":"b"}}`, false, cursor.KindOther},
	{"truncated non-json", "", strings.Repeat("x", DataPrefixBytes), true, cursor.KindOther},
	{"truncated json string", "", `"result`, true, cursor.KindOther},

	{"batch of responses", "", "[" + respJSON + "," + respJSON + "]", false, cursor.KindResponse},
	{"batch with a response after a notification", "", "[" + notifJSON + "," + respJSON + "]", false, cursor.KindResponse},
	{"batch with a nil result", "", "[" + notifJSON + "," + goNilResult + "]", false, cursor.KindResponse},
	{"batch of an error then a result", "", "[" + goError + "," + goResult + "]", false, cursor.KindResponse},
	{"batch of a notification then an error", "", "[" + notifJSON + "," + goError + "]", false, cursor.KindError},
	{"batch of errors", "", "[" + goError + ", " + tsError + "]", false, cursor.KindError},
	{"batch of notification then request", "", "[" + notifJSON + "," + reqJSON + "]", false, cursor.KindNotification},
	{"batch of requests", "", "[" + reqJSON + "]", false, cursor.KindRequest},
	{"batch with whitespace", "", "[ \n" + reqJSON + " ,\r\n " + respJSON + " ]", false, cursor.KindResponse},
	{"batch of a number then a response", "", "[1," + respJSON + "]", false, cursor.KindResponse},
	{"nested batch is not a message", "", "[[" + respJSON + "]]", false, cursor.KindOther},
	{"empty batch", "", "[]", false, cursor.KindOther},
	{"batch of non-objects", "", "[1,2]", false, cursor.KindOther},
	{"truncated batch, response visible", "", "[" + notifJSON + "," + respJSON + "," + `{"jsonrpc":"2.0","method":"x","par`, true, cursor.KindResponse},
	{"truncated batch, cut response after a notification", "", "[" + notifJSON + `, {"jsonrpc":"2.0","id":4,"result":{"a":`, true, cursor.KindResponse},
	{"truncated batch, cut error after a notification", "", "[" + notifJSON + `,{"jsonrpc":"2.0","id":4,"error":{"a":`, true, cursor.KindResponse},
	{"truncated batch, cut notification after a notification", "", "[" + notifJSON + `,{"jsonrpc":"2.0","method":"y","params":{`, true, cursor.KindResponse},
	{"truncated batch, only a cut element", "", `[{"jsonrpc":"2.0","id":4,"res`, true, cursor.KindResponse},
	{"truncated batch, cut between elements", "", "[" + reqJSON + ",", true, cursor.KindResponse},
	{"truncated batch, cut after an error", "", "[" + goError + ",", true, cursor.KindResponse},
	{"truncated batch, a result hidden past a long notification (issue 22)", "", `[{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("n", 600)[:DataPrefixBytes-60], true, cursor.KindResponse},

	{"method decides before a later id", "", `{"method":"x","id":1}`, false, cursor.KindRequest},
	{"result before method", "", `{"result":1,"method":"x"}`, false, cursor.KindResponse},
	{"escaped result key", "", `{"r\u0065sult":1}`, false, cursor.KindResponse},
	{"key text inside a string value, no method", "", `{"jsonrpc":"2.0","x":"\",\"result\":{"}`, false, cursor.KindOther},
	{"leading whitespace before an error", "", " \t\r\n" + goError, false, cursor.KindError},
	{"blank, truncated", "", " \n", true, cursor.KindOther},
	{"a number", "", "42", false, cursor.KindOther},
	{"truncated, no key visible", "", `{"jsonrpc":"2.0","i`, true, cursor.KindResponse},
	{"truncated inside the method string", "", `{"jsonrpc":"2.0","method":"notif`, true, cursor.KindResponse},
	{"truncated after the method string", "", `{"jsonrpc":"2.0","method":"n"`, true, cursor.KindNotification},
	{"truncated inside the error value", "", `{"id":1,"error":{"code":`, true, cursor.KindError},
	{"untruncated broken object", "", `{"jsonrpc":"2.0"`, false, cursor.KindOther},
	{"batch: a result wins", "", "[" + goNotification + "," + goError + "," + goResult + "]", false, cursor.KindResponse},
	{"batch: errors only", "", "[" + goError + ", " + goNotification + "]", false, cursor.KindError},
	{"batch: no response", "", "[" + goNotification + "," + goRequest + "]", false, cursor.KindNotification},
	{"batch: nil result", "", "[" + goNotification + "," + goNilResult + "]", false, cursor.KindResponse},
	{"batch: cut element", "", "[" + goNotification + `,{"jsonrpc":"2.0"`, true, cursor.KindResponse},
	{"batch: scalars", "", `[1,"x",null]`, false, cursor.KindOther},
}

func TestClassify(t *testing.T) {
	for _, tc := range kindCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify([]byte(tc.typ), []byte(tc.data), tc.truncated); got != tc.want {
				t.Fatalf("Classify(%q, %q, %v) = %v, want %v", tc.typ, tc.data, tc.truncated, got, tc.want)
			}
		})
	}
}

// TestClassifyEveryPrefix cuts the SDKs' payloads at every byte: a prefix of
// a result is a response wherever it is cut; a prefix of an error is a
// response until its "error" value starts, then an error; a request and a
// notification become what they are once their "method" string is closed
// (a request whose "id" shows first is a response until then).
func TestClassifyEveryPrefix(t *testing.T) {
	for _, tc := range []struct {
		data   string
		after  string // the kind changes to final at the end of this text
		final  cursor.EventKind
		before cursor.EventKind // the kind of a prefix ending before after
	}{
		{goResult, "", cursor.KindResponse, cursor.KindResponse},
		{goNilResult, "", cursor.KindResponse, cursor.KindResponse},
		{tsResult, "", cursor.KindResponse, cursor.KindResponse},
		{pyResult, "", cursor.KindResponse, cursor.KindResponse},
		{pySpaced, "", cursor.KindResponse, cursor.KindResponse},
		{respJSON, "", cursor.KindResponse, cursor.KindResponse},
		{goError, `"error":{`, cursor.KindError, cursor.KindResponse},
		{tsError, `"error":{`, cursor.KindError, cursor.KindResponse},
		{pyError, `"error":{`, cursor.KindError, cursor.KindResponse},
		{goNotification, `"method":"notifications/progress"`, cursor.KindNotification, cursor.KindResponse},
		{pyNotification, `"method":"notifications/progress"`, cursor.KindNotification, cursor.KindResponse},
		{goRequest, `"method":"sampling/createMessage"`, cursor.KindRequest, cursor.KindResponse},
		{pyRequest, `"method":"roots/list"`, cursor.KindRequest, cursor.KindResponse},
	} {
		change := 0
		if tc.after != "" {
			change = strings.Index(tc.data, tc.after) + len(tc.after)
		}
		for cut := 1; cut < len(tc.data); cut++ {
			want := tc.before
			if cut >= change {
				want = tc.final
			}
			if got := Classify(nil, []byte(tc.data[:cut]), true); got != want {
				t.Errorf("Classify(%q, truncated) = %v, want %v", tc.data[:cut], got, want)
			}
		}
	}
}

// TestClassifyDoesNotAllocate: Classify runs on every event of a stream and
// allocates nothing, whatever the event holds.
func TestClassifyDoesNotAllocate(t *testing.T) {
	inputs := [][]byte{
		[]byte(respJSON), []byte(notifJSON), []byte(reqJSON),
		[]byte(goResult), []byte(goNilResult), []byte(goError), []byte(goNotification), []byte(goRequest),
		[]byte(tsResult), []byte(tsError), []byte(tsNotification), []byte(tsRequest),
		[]byte(pyResult), []byte(pyError), []byte(pyNotification), []byte(pyRequest),
		[]byte("[" + notifJSON + "," + respJSON + "]"),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"te\u0078t":"a\"b"}}`),
		[]byte(`{"jsonrpc":"2.0","id":1,"re`),
		[]byte(`{"jsonrpc":"2.0","method":"n","params":{"data":"` + strings.Repeat("q", DataPrefixBytes)),
	}
	message := []byte("message")
	allocs := testing.AllocsPerRun(100, func() {
		for _, in := range inputs {
			Classify(nil, in, true)
			Classify(message, in, false)
		}
	})
	if allocs != 0 {
		t.Errorf("Classify allocates %v times per run", allocs)
	}
}
