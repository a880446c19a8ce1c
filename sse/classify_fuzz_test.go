package sse

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// jsonMember is a member of a JSON object (or an element of an array, with
// no key) as encoding/json reads it: its key and the offsets of its value
// in the enclosing text.
type jsonMember struct {
	key        string
	start, end int
}

// members lists the members of the JSON object or array text (valid JSON)
// in order, decoded by encoding/json.
func members(t testing.TB, text []byte) []jsonMember {
	dec := json.NewDecoder(bytes.NewReader(text))
	if _, err := dec.Token(); err != nil {
		t.Fatalf("%q: %v", text, err)
	}
	var ms []jsonMember
	for dec.More() {
		var m jsonMember
		if text[0] == '{' {
			tok, err := dec.Token()
			if err != nil {
				t.Fatalf("%q: %v", text, err)
			}
			m.key = tok.(string)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		m.end = int(dec.InputOffset())
		m.start = m.end - len(raw)
		if !bytes.Equal(text[m.start:m.end], raw) {
			t.Fatalf("%q: member %q not at [%d:%d]", text, m.key, m.start, m.end)
		}
		ms = append(ms, m)
	}
	return ms
}

// seen reports whether a member whose value is text[m.start:m.end] shows in
// text[:cut], by the rule of Classify: once its value starts, or for a
// string, once the string is closed.
func (m jsonMember) seen(text []byte, cut int) bool {
	if text[m.start] == '"' {
		return m.end <= cut
	}
	return m.start < cut
}

// oracleKind is what Classify must make of text[:cut] (truncated when cut <
// len(text)), decided by encoding/json on the whole of text, which must be
// valid JSON.
func oracleKind(t testing.TB, text []byte, cut int) cursor.EventKind {
	i := bytes.IndexFunc(text, func(r rune) bool { return !strings.ContainsRune(" \t\r\n", r) })
	if i < 0 || i >= cut {
		return cursor.KindOther
	}
	truncated := cut < len(text)
	text, cut = text[i:], cut-i
	switch text[0] {
	case '{':
		return oracleObject(t, text, cut, truncated)
	case '[':
		if truncated {
			return cursor.KindResponse // an unseen element may be a result
		}
		kind, errs := cursor.KindOther, false
		for n, m := range members(t, text) {
			k := cursor.KindOther
			if text[m.start] == '{' {
				k = oracleObject(t, text[m.start:m.end], m.end-m.start, false)
			}
			if n == 0 {
				kind = k
			}
			if k == cursor.KindResponse {
				return k
			}
			errs = errs || k == cursor.KindError
		}
		if errs {
			return cursor.KindError
		}
		return kind
	}
	return cursor.KindOther
}

// oracleObject classifies the JSON-RPC message obj[:cut] (obj a whole
// object) as Classify must; truncated reports that the data goes on after
// the cut. The members seen in obj[:cut] are read in order, up to "result"
// or "error"; without either, "method" makes a request (with "id") or a
// notification, and "id" or a cut object a response.
func oracleObject(t testing.TB, obj []byte, cut int, truncated bool) cursor.EventKind {
	var method, id bool
	for _, m := range members(t, obj) {
		if !m.seen(obj, cut) {
			break
		}
		switch {
		case m.key == "id":
			id = true
		case method: // the first of method, result and error decides
		case m.key == "result":
			return cursor.KindResponse
		case m.key == "error":
			return cursor.KindError
		case m.key == "method":
			method = true
		}
	}
	switch {
	case method && id:
		return cursor.KindRequest
	case method:
		return cursor.KindNotification
	case id, truncated:
		return cursor.KindResponse
	}
	return cursor.KindOther
}

// TestClassifyOracle checks the oracle itself on the table's complete
// payloads and cuts of them.
func TestClassifyOracle(t *testing.T) {
	for _, s := range []string{goResult, goNilResult, goError, goNotification, goRequest, tsResult, tsError,
		tsNotification, tsRequest, pyResult, pyError, pyNotification, pyRequest, pySpaced,
		"[" + goNotification + "," + goError + "]", "[" + goError + ", " + goResult + "]", ` [1, "x", {"id":2}] `} {
		checkOracle(t, []byte(s))
	}
}

// checkOracle compares Classify with the oracle on text, whole and cut at
// every byte.
func checkOracle(t *testing.T, text []byte) {
	t.Helper()
	for cut := 0; cut <= len(text); cut++ {
		truncated := cut < len(text)
		got, want := Classify(nil, text[:cut], truncated), oracleKind(t, text, cut)
		if got != want {
			t.Fatalf("Classify(%q, truncated %v) = %v, encoding/json's reading says %v", text[:cut], truncated, got, want)
		}
	}
}

// kindSeeds are the events FuzzClassify starts from: the SDKs' layouts,
// batches, escapes, cuts inside a string, and "method" before "result".
var kindSeeds = []string{respJSON, notifJSON, reqJSON, "[" + respJSON + "," + notifJSON + "]", `{"a":[{"b":"\"`, "[[[[", `{"id":`,
	goNilResult, goError, tsResult, tsNotification, pyNotification, "[" + goError + "," + goNotification + "]",
	`{"r\u0065sult":1}`, `{"method":"x","params":{"result":1},"id":"\"\\"}`,
	`{"method":"x","result":1}`, `[{"method":"x","error":1},{"id":2,"method":"y"}]`}

// FuzzClassify checks that any data prefix, cut anywhere, classifies
// without panicking, that a non-message event type is never a JSON-RPC
// kind, and, for valid JSON (encoding/json decides), that Classify agrees
// with the oracle on the whole data and on every prefix of it.
func FuzzClassify(f *testing.F) {
	for _, s := range kindSeeds {
		f.Add([]byte(s), uint16(len(s)))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		if json.Valid(data) {
			checkOracle(t, data)
		}
		full := data
		truncated := int(cut) < len(data)
		if truncated {
			data = data[:cut]
		}
		k := Classify(nil, data, truncated)
		if got, want := ResponseClass(nil, data, truncated), responseClassOf(k); got != want {
			t.Fatalf("ResponseClass(%q) = %v, Classify says %v", data, got, k)
		}
		// The memo answers from the bytes that decided an earlier event:
		// warmed by the cut data, then by the whole, then by the cut again,
		// it must give each its ResponseClass.
		var m kindMemo
		for _, in := range []struct {
			data      []byte
			truncated bool
		}{{data, truncated}, {full, false}, {data, truncated}} {
			if got, want := m.responseClass(nil, in.data, in.truncated), ResponseClass(nil, in.data, in.truncated); got != want {
				t.Fatalf("memo after %q: %q (truncated %v) is %v, want %v", m.lead, in.data, in.truncated, got, want)
			}
		}
		if k == cursor.KindPriming || k > cursor.KindError {
			t.Fatalf("Classify(%q) = %v", data, k)
		}
		if k2 := Classify([]byte("message"), data, truncated); k2 != k {
			t.Fatalf("Classify(%q): %v without a type, %v with \"message\"", data, k, k2)
		}
		if k3 := Classify([]byte("endpoint"), data, truncated); k3 != cursor.KindOther {
			t.Fatalf("Classify(endpoint, %q) = %v", data, k3)
		}
	})
}
