package sse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// methodBeforeResponse names the events of kindCases on which ResponseKind
// parts from Classify (classify.go): an object with "method" before
// "result" or "error" is a response to Classify, no response to
// ResponseKind (its cursor stays plain, as a request's).
var methodBeforeResponse = map[string]bool{
	"result after method and id is a response": true,
	"error after method is an error":           true,
	"response with escaped result key":         true,
}

// TestResponseKind runs ResponseKind on Classify's table: it must answer
// what Classify answers about a response (responseOnly), but where the
// two part by rule.
func TestResponseKind(t *testing.T) {
	parted := 0
	for _, tc := range kindCases {
		want := responseOnly(tc.want)
		if methodBeforeResponse[tc.name] {
			want, parted = cursor.KindOther, parted+1
		}
		if got := ResponseKind([]byte(tc.typ), []byte(tc.data), tc.truncated); got != want {
			t.Errorf("%s: ResponseKind(%q, %q, %v) = %v, want %v", tc.name, tc.typ, tc.data, tc.truncated, got, want)
		}
	}
	if parted != len(methodBeforeResponse) {
		t.Fatalf("%d of the %d events ResponseKind parts from Classify on are in kindCases: a name changed", parted, len(methodBeforeResponse))
	}
}

// responseOnly is what a kind of Classify says about a response: KindResponse
// and KindError as they are, everything else KindOther.
func responseOnly(k cursor.EventKind) cursor.EventKind {
	if k.IsResponse() {
		return k
	}
	return cursor.KindOther
}

// oracleResponseKind is what ResponseKind must make of text[:cut]
// (truncated when cut < len(text)), decided by encoding/json on the whole of
// text, which must be valid JSON.
func oracleResponseKind(t testing.TB, text []byte, cut int) cursor.EventKind {
	// oracleKind's rule for batches, with elements each a result, an
	// error or neither, is ResponseKind's.
	return oracleMessage(t, text, cut, oracleResponseObject)
}

// oracleResponseObject is oracleResponseKind of obj[:cut], obj a whole
// object: the first of "method", "result", "error" seen decides.
func oracleResponseObject(t testing.TB, obj []byte, cut int, truncated bool) cursor.EventKind {
	return oracleMembers(t, obj, cut, truncated, true)
}

// methodFirst reports whether the JSON object or batch text (valid JSON)
// has an object in which "method" comes before "result" or "error", the one
// case where ResponseKind and Classify part.
func methodFirst(t testing.TB, text []byte) bool {
	text = bytes.TrimLeft(text, " \t\r\n")
	if len(text) == 0 {
		return false
	}
	object := func(obj []byte) bool {
		method := false
		for _, m := range members(t, obj) {
			switch m.key {
			case "method":
				method = true
			case "result", "error":
				return method
			}
		}
		return false
	}
	switch text[0] {
	case '{':
		return object(text)
	case '[':
		for _, m := range members(t, text) {
			if text[m.start] == '{' && object(text[m.start:m.end]) {
				return true
			}
		}
	}
	return false
}

// checkResponseOracle compares ResponseKind with the oracle on text, whole
// and cut at every byte, and with Classify where the two must agree.
func checkResponseOracle(t *testing.T, text []byte) {
	t.Helper()
	differs := methodFirst(t, text)
	for cut := 0; cut <= len(text); cut++ {
		truncated := cut < len(text)
		got, want := ResponseKind(nil, text[:cut], truncated), oracleResponseKind(t, text, cut)
		if got != want {
			t.Fatalf("ResponseKind(%q, truncated %v) = %v, encoding/json's reading says %v", text[:cut], truncated, got, want)
		}
		if c := responseOnly(Classify(nil, text[:cut], truncated)); c != got && !differs {
			t.Fatalf("ResponseKind(%q, truncated %v) = %v, Classify says %v", text[:cut], truncated, got, c)
		}
	}
}

// TestResponseKindOracle checks ResponseKind against the oracle on the SDK
// payloads and batches of them, cut at every byte.
func TestResponseKindOracle(t *testing.T) {
	for _, s := range []string{goResult, goNilResult, goError, goNotification, goRequest, tsResult, tsError,
		tsNotification, tsRequest, pyResult, pyError, pyNotification, pyRequest, pySpaced, respJSON, notifJSON, reqJSON,
		"[" + goNotification + "," + goError + "]", "[" + goError + ", " + goResult + "]", ` [1, "x", {"id":2}] `,
		`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, `{"result":1,"method":"x"}`,
		// Decisive keys on either side of the window's end.
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("7", responseWindow-30) + `","result":{"content":[{"type":"text","text":"` + strings.Repeat("z", 200) + `"}]}}`,
		`{"jsonrpc":"2.0","id":"` + strings.Repeat("7", responseWindow-22) + `","error":{"code":1}}`,
		`{"jsonrpc":"2.0","params":{"a":"` + strings.Repeat("\\\"", responseWindow/3) + `"},"method":"x","result":1}`,
		`{"jsonrpc":"2.0","id":` + strings.Repeat("1", responseWindow) + `}`} {
		checkResponseOracle(t, []byte(s))
	}
}

// responseWholeKind is the kind responseWhole reads.
func responseWholeKind(obj string, truncated bool) cursor.EventKind {
	k, _ := responseWhole(obj, truncated)
	return k
}

// fuzzMemo carries decisions from one fuzz input to the next.
var fuzzMemo kindMemo

// TestKindMemo checks the memo on streams of alike messages: every
// decision is ResponseKind's, whatever it remembers from the earlier ones.
func TestKindMemo(t *testing.T) {
	var m kindMemo
	shapes := []string{goResult, goNilResult, goError, goNotification, goRequest, tsResult, tsError, tsNotification,
		tsRequest, pyResult, pyError, pyNotification, pyRequest, pySpaced, respJSON, notifJSON, reqJSON,
		`{"jsonrpc":"2.0","method":"x","result":1}`, `{"jsonrpc":"2.0","method":1}`, `{"jsonrpc":"2.0","method":12}`,
		`{"jsonrpc":"2.0","result":tru`, `{"jsonrpc":"2.0","result":true}`, "[" + goNotification + "," + goResult + "]"}
	for round := range 3 {
		for _, s := range shapes {
			for cut := 0; cut <= len(s); cut++ {
				in := []byte(s[:cut])
				if round == 1 {
					in = []byte(s[len(s)-cut:])
				}
				truncated := cut < len(s)
				if got, want := m.responseKind(nil, in, truncated), ResponseKind(nil, in, truncated); got != want {
					t.Fatalf("responseKind(%q, truncated %v) = %v, ResponseKind says %v", in, truncated, got, want)
				}
			}
		}
	}
}

// FuzzResponseKind checks that any data prefix classifies without
// panicking into one of the three kinds a cursor needs, that a non-message
// event type is KindOther, and, for valid JSON (encoding/json decides), that
// ResponseKind agrees with the oracle on the whole data and every prefix of
// it, and with Classify unless "method" comes before "result" or "error";
// and that reading an object's first responseWindow bytes first, or a memo
// of earlier decisions, changes nothing, on any data.
func FuzzResponseKind(f *testing.F) {
	// Classify's seeds, and the method-before-result events and long
	// objects where ResponseKind parts from it.
	for _, s := range append(kindSeeds[:len(kindSeeds):len(kindSeeds)], `{"method":"x","result":1}`,
		`[{"method":"x","error":1},{"id":2,"method":"y"}]`,
		`{"jsonrpc":"2.0","id":"`+strings.Repeat("7", responseWindow-30)+`","result":{"content":[{"type":"text","text":"`+strings.Repeat("z", 200)+`"}]}}`,
		`{"jsonrpc":"2.0","params":{"a":"`+strings.Repeat("\\\"", responseWindow/3)+`"},"method":"x"}`) {
		f.Add([]byte(s), uint16(len(s)))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		data, truncated := fuzzedEvent(t, data, cut, checkResponseOracle)
		if obj := strings.TrimLeft(string(data), " \t\r\n"); strings.HasPrefix(obj, "{") && len(obj) > responseWindow {
			// The window is an optimization only, valid JSON or not (a
			// shorter object is read whole anyway).
			if got, whole := responseObject(obj, truncated), responseWholeKind(obj, truncated); got != whole {
				t.Fatalf("responseObject(%q, truncated %v) = %v, read whole %v", obj, truncated, got, whole)
			}
		}
		k := ResponseKind(nil, data, truncated)
		// The memo, primed with the seeds and this data, cut and whole,
		// decides as ResponseKind does.
		for _, in := range [][]byte{[]byte(respJSON), []byte(notifJSON), data, data[:len(data)/2], data, []byte(goError), data} {
			tr := truncated || len(in) < len(data)
			if got, want := fuzzMemo.responseKind(nil, in, tr), ResponseKind(nil, in, tr); got != want {
				t.Fatalf("memo: responseKind(%q, truncated %v) = %v, ResponseKind says %v", in, tr, got, want)
			}
		}
		// The rewriter takes a "response" here as Classify's answer for
		// the stream tail (classifyLastID).
		for _, typ := range [][]byte{nil, []byte("message")} {
			if ResponseKind(typ, data, truncated) == cursor.KindResponse {
				if c := Classify(typ, data, truncated); c != cursor.KindResponse {
					t.Fatalf("ResponseKind(%q, %q) is a response, Classify says %v", typ, data, c)
				}
			}
		}
		if k2 := ResponseKind([]byte("message"), data, truncated); k2 != k {
			t.Fatalf("ResponseKind(%q): %v without a type, %v with \"message\"", data, k, k2)
		}
		if k3 := ResponseKind([]byte("endpoint"), data, truncated); k3 != cursor.KindOther {
			t.Fatalf("ResponseKind(endpoint, %q) = %v", data, k3)
		}
	})
}

// TestMintMethodBeforeResult pins the one case where a minted cursor's kind
// and the event's Kind part: an object with "method" before "result" or
// "error" (not valid JSON-RPC) gets a plain cursor, while Events (the stream
// tail) still call it a response, with or without ClassifyLastIDOnly.
func TestMintMethodBeforeResult(t *testing.T) {
	odd := []string{`{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, `{"method":"x","error":{}}`}
	for i, data := range odd {
		in := "data: " + goNotification + "\nid: e-1\n\ndata: " + data + "\nid: e-2\n\ndata: " + goResult + "\nid: e-3\n\n"
		want := strings.NewReplacer("id: e-1", "id: http:e-1", "id: e-2", "id: http:e-2", "id: e-3", "id: http:~1r3.2.e-32").Replace(in)
		wantKind := []cursor.EventKind{cursor.KindResponse, cursor.KindError}[i]
		cut := strings.Index(in, "id: e-2") + len("id: e-2\n\n")
		for _, lastIDOnly := range []bool{false, true} {
			// Split after the odd event: it is its call's last with an ID.
			out, evs, _, _ := feed(t, mintRewriter(cursor.TransportHTTP, 0, "", lastIDOnly), splitAt([]byte(in), cut))
			if string(out) != want {
				t.Fatalf("lastIDOnly %v: output %q\nwant %q", lastIDOnly, out, want)
			}
			if len(evs) != 3 || evs[1].Kind != wantKind {
				t.Fatalf("lastIDOnly %v: events %s, want the second one %v", lastIDOnly, dumpEvents(evs), wantKind)
			}
		}
	}
}
