package wasmhost

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestResultScan: the cut falls right after the blank line that ends the
// first JSON-RPC result event, whatever the line ends and however the bytes
// are split; nothing else is a result.
func TestResultScan(t *testing.T) {
	const result = `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`
	for name, tc := range map[string]struct{ stream, want string }{
		"lf, id moved after data": {
			"id: http:e-1\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"result\":1}}\nid: http:e-2\n\nevent: message\ndata: " + result + "\nid: http:~1r3.2.e-3\n\nid: http:e-4\ndata: \n\n",
			"id: http:e-1\ndata: \n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"result\":1}}\nid: http:e-2\n\nevent: message\ndata: " + result + "\nid: http:~1r3.2.e-3\n\n",
		},
		"crlf": {
			"id: e-1\r\ndata: " + result + "\r\n\r\nid: e-2\r\ndata: x\r\n\r\n",
			"id: e-1\r\ndata: " + result + "\r\n\r\n",
		},
		"lone cr": {
			"data: " + result + "\r\rdata: next\r\r",
			"data: " + result + "\r\r",
		},
		"data split over lines, no space": {
			"data:{\"jsonrpc\":\"2.0\",\ndata:\"id\":1,\"result\":{}}\n\nrest",
			"data:{\"jsonrpc\":\"2.0\",\ndata:\"id\":1,\"result\":{}}\n\n",
		},
		"an error, a request, a comment and data-less events are no result": {
			": ok\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-1}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"x\",\"result\":1}\n\nid: 9\n\ndataresult: {\"result\":1}\n\n",
			"",
		},
	} {
		full := tc.stream
		for split := 0; split <= len(full); split++ {
			for _, parts := range [][]string{{full[:split], full[split:]}, {full[:split/2], full[split/2 : split], full[split:]}} {
				var r resultScan
				sent, cut := "", false
				for _, p := range parts {
					if n := r.scan([]byte(p)); n >= 0 {
						sent += p[:n]
						cut = true
						break
					}
					sent += p
				}
				if tc.want == "" {
					if cut {
						t.Fatalf("%s, split at %d: cut after %q", name, split, sent)
					}
					continue
				}
				if !cut || sent != tc.want {
					t.Fatalf("%s, split at %d (%d parts): cut %v after %q, want a cut after %q", name, split, len(parts), cut, sent, tc.want)
				}
			}
		}
	}
}

// TestResultScanLongData: a result whose data exceeds what the scan keeps
// is still found, and memory stays bounded.
func TestResultScanLongData(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", 3*maxResultScan) + `"}}`
	var r resultScan
	stream := "data: " + big + "\n\n"
	if n := r.scan([]byte(stream)); n != len(stream) {
		t.Fatalf("cut at %d of %d", n, len(stream))
	}
	if cap(r.data) > 2*maxResultScan || cap(r.line) > 2*maxResultScan {
		t.Errorf("kept %d and %d bytes", cap(r.data), cap(r.line))
	}
}

// TestProxyFaultCutsAfterResult: the client receives the stream up to the
// end of its first result event, across the upstream's chunks; the plugin
// sees an idle timeout and the record names the cut. A stream without a
// result ends cleanly.
func TestProxyFaultCutsAfterResult(t *testing.T) {
	const head = "id: e-1\ndata: \n\nevent: message\nid: e-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,"
	const tail = "\"result\":{}}\n\n"
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if r.URL.Path == "/none" {
			io.WriteString(w, "id: e-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{}}\n\n")
			return
		}
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, tail+"id: e-3\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n")
	})
	f := newProxyFixture(t, upstream, ProxyOptions{Fault: func(*http.Request) Fault { return Fault{CutAfterResult: true} }}, Options{})
	resp := f.request(t, "GET", "/cut", "", nil)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil || string(body) != head+tail {
		t.Fatalf("cut stream: %q, err %v; want %q and a reset", body, err, head+tail)
	}
	if rec := f.record(t); rec.End != EndStreamIdleTimeout || rec.Flags&FlagStreamIdleTimeout == 0 || rec.EndName() != "cut" {
		t.Errorf("record = %+v", rec)
	}
	resp = f.request(t, "GET", "/none", "", nil)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.Contains(string(body), `"error"`) {
		t.Errorf("a stream without a result: %q, %v", body, err)
	}
	if rec := f.record(t); rec.Cut {
		t.Errorf("a stream without a result was cut: %+v", rec)
	}
}
