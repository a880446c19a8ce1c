package wasmhost

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestHeaderSerializationRoundTrip(t *testing.T) {
	cases := []Headers{
		{},
		{{":status", "200"}},
		{{":method", "GET"}, {":path", "/mcp?x=1"}, {"last-event-id", "sse:e-104"}, {"empty", ""}, {"dup", "a"}, {"dup", "b"}},
		{{"k", string([]byte{0, 1, 2})}},
	}
	for _, h := range cases {
		b := h.AppendSerialized(nil)
		if len(b) != h.SerializedSize() {
			t.Errorf("%v: size %d, SerializedSize %d", h, len(b), h.SerializedSize())
		}
		got, err := ParseHeaders(b)
		if err != nil {
			t.Fatalf("%v: %v", h, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(h) {
			t.Errorf("round trip: %v → %v", h, got)
		}
	}
	// The wire format of the spec: count, sizes, then NUL-terminated data.
	b := Headers{{"ab", "c"}}.AppendSerialized(nil)
	want := []byte{1, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 'a', 'b', 0, 'c', 0}
	if !bytes.Equal(b, want) {
		t.Errorf("serialized = %v, want %v", b, want)
	}
}

func TestParseHeadersRejectsMalformed(t *testing.T) {
	huge := binary.LittleEndian.AppendUint32(nil, 1025)
	huge = append(huge, make([]byte, 1025*8+1025*2)...)
	for name, b := range map[string][]byte{
		"short":         {1, 0},
		"count too big": {5, 0, 0, 0, 0, 0, 0, 0},
		"key overflow":  {1, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 'a', 0},
		"over 1024":     huge,
	} {
		if _, err := ParseHeaders(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestSetBufferBytes(t *testing.T) {
	for _, c := range []struct {
		name        string
		buf         string
		start, size uint32
		data        string
		want        string
		status      Status
	}{
		{"prepend", "world", 0, 0, "hello ", "hello world", StatusOK},
		{"replace", "old body", 0, 0x7fffffff, "new", "new", StatusOK},
		{"drain some then prepend", "abcdef", 0, 2, "X", "Xcdef", StatusOK},
		{"append at length", "abc", 3, 0, "d", "abcd", StatusOK},
		{"append beyond", "abc", 0x7fffffff, 0, "d", "abcd", StatusOK},
		{"empty buffer append", "", 5, 0, "x", "x", StatusOK},
		{"inject in the middle", "abcdef", 2, 1, "X", "abcdef", StatusBadArgument},
		{"start 1", "abc", 1, 0, "X", "abc", StatusBadArgument},
	} {
		out, st := SetBufferBytes([]byte(c.buf), c.start, c.size, []byte(c.data))
		if st != c.status || string(out) != c.want {
			t.Errorf("%s: got %q %v, want %q %v", c.name, out, st, c.want, c.status)
		}
	}
}

func TestRequestHeadersFromHTTP(t *testing.T) {
	r := httptest.NewRequest("POST", "http://example.test/mcp?s=1", nil)
	r.Header.Set("Mcp-Session-Id", "s-77")
	r.Header.Set("Connection", "keep-alive")
	h := RequestHeaders(r)
	want := map[string]string{":authority": "example.test", ":path": "/mcp?s=1", ":method": "POST", ":scheme": "http",
		"mcp-session-id": "s-77", "x-forwarded-proto": "http"}
	for k, v := range want {
		if got := h.Value(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if _, ok := h.Get("connection"); ok {
		t.Error("hop-by-hop header passed to the plugin")
	}
	if h[0].Key != ":authority" || h[3].Key != ":scheme" {
		t.Errorf("pseudo-headers not first: %v", h)
	}
	out := http.Header{}
	Headers{{":status", "200"}, {"x-a", "1"}, {"x-a", "2"}}.ToHTTP(out)
	if len(out) != 1 || len(out["X-A"]) != 2 {
		t.Errorf("ToHTTP = %v", out)
	}
}

func TestHeadersSetAndDel(t *testing.T) {
	h := Headers{{"a", "1"}, {"b", "2"}, {"a", "3"}}
	h.Set("A", "x") // Envoy's setCopy: every "a" removed, one added at the end
	if fmt.Sprint(h) != "[{b 2} {a x}]" {
		t.Errorf("Set = %v", h)
	}
	h.Del("b")
	h.Del("missing")
	if fmt.Sprint(h) != "[{a x}]" {
		t.Errorf("Del = %v", h)
	}
}
