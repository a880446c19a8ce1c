package front

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// backend is a test backend that answers with its index, the session key
// and the Last-Event-ID it received, or with an SSE stream for /stream.
type backend struct {
	index    int
	srv      *httptest.Server
	canceled chan struct{}
}

func startBackends(t *testing.T, n int) ([]*backend, []*url.URL) {
	t.Helper()
	var bs []*backend
	var urls []*url.URL
	for i := range n {
		b := &backend{index: i, canceled: make(chan struct{}, 16)}
		b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
		t.Cleanup(b.srv.Close)
		u, _ := url.Parse(b.srv.URL)
		bs, urls = append(bs, b), append(urls, u)
	}
	return bs, urls
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/stream" {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e-1\ndata: from %d\n\n", b.index)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // held open until the client goes away
		b.canceled <- struct{}{}
		return
	}
	fmt.Fprintf(w, "%d %s %s", b.index, SessionKey(r), r.Header.Get("Last-Event-ID"))
}

func startFront(t *testing.T, urls []*url.URL, p Policy) (*Front, string) {
	t.Helper()
	f, err := New(urls, p)
	if err != nil {
		t.Fatal(err)
	}
	srv := f.Server()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return f, "http://" + ln.Addr().String()
}

// get sends one request and returns the backend index that answered and
// the rest of its answer.
func get(t *testing.T, c *http.Client, rawURL string, header http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, rawURL, nil)
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	idx, rest, _ := strings.Cut(string(body), " ")
	n, err := strconv.Atoi(idx)
	if err != nil {
		t.Fatalf("answer %q (%s)", body, resp.Status)
	}
	return n, rest
}

func TestSessionKey(t *testing.T) {
	cases := []struct {
		header, query, want string
	}{
		{"s-1", "", "s-1"},
		{"", "sessionId=abc", "abc"},
		{"s-1", "sessionId=abc", "s-1"},
		{"", "session_id=abc", ""},
		{"", "", ""},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodPost, "/messages?"+tc.query, nil)
		if tc.header != "" {
			r.Header.Set("Mcp-Session-Id", tc.header)
		}
		if got := SessionKey(r); got != tc.want {
			t.Errorf("header %q query %q: key %q, want %q", tc.header, tc.query, got, tc.want)
		}
	}
}

func TestRoundRobinPerConnection(t *testing.T) {
	_, urls := startBackends(t, 3)
	f, base := startFront(t, urls, RoundRobin)

	// One client, keep-alive: every request rides one connection, so one backend.
	keep := &http.Client{Transport: &http.Transport{}}
	defer keep.CloseIdleConnections()
	first, _ := get(t, keep, base+"/a", http.Header{"Mcp-Session-Id": {"s-1"}})
	for range 4 {
		if got, _ := get(t, keep, base+"/a", http.Header{"Mcp-Session-Id": {"s-2"}}); got != first {
			t.Fatalf("a request on the same connection went to backend %d, want %d", got, first)
		}
	}
	// A new connection per request: the backends in turn, whatever the session.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	var seq []int
	for range 6 {
		n, _ := get(t, fresh, base+"/a", http.Header{"Mcp-Session-Id": {"s-1"}})
		seq = append(seq, n)
	}
	for i := 1; i < len(seq); i++ {
		if seq[i] != (seq[i-1]+1)%3 {
			t.Fatalf("new connections went to %v, want each to the next backend", seq)
		}
	}
	if n := len(f.Placements()); n != 11 {
		t.Errorf("%d placements recorded, want 11", n)
	}
}

func TestSessionHash(t *testing.T) {
	_, urls := startBackends(t, 3)
	f, base := startFront(t, urls, SessionHash)
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

	count := make([]int, 3)
	for i := range 300 {
		sid := fmt.Sprintf("%08x-session-%d", i*2654435761, i)
		byHeader, rest := get(t, fresh, base+"/mcp", http.Header{"Mcp-Session-Id": {sid}, "Last-Event-ID": {"http:e-7"}})
		if want := sid + " http:e-7"; rest != want {
			t.Fatalf("backend saw %q, want %q (session and Last-Event-ID passed through)", rest, want)
		}
		byQuery, _ := get(t, fresh, base+"/messages?sessionId="+url.QueryEscape(sid), nil)
		again, _ := get(t, fresh, base+"/mcp", http.Header{"Mcp-Session-Id": {sid}})
		if byHeader != byQuery || byHeader != again {
			t.Fatalf("session %s went to backends %d (header), %d (query), %d (again); want one", sid, byHeader, byQuery, again)
		}
		if f.Backend(sid, 0) != byHeader || f.Backend(sid, 2) != byHeader {
			t.Fatalf("Backend(%s) disagrees with where the request went", sid)
		}
		count[byHeader]++
	}
	for b, n := range count {
		if n < 50 {
			t.Errorf("backend %d got %d of 300 sessions; the ring spreads badly: %v", b, n, count)
		}
	}
	// No session: the connection's round-robin backend.
	var seq []int
	for range 3 {
		n, _ := get(t, fresh, base+"/sse", nil)
		seq = append(seq, n)
	}
	if seq[1] != (seq[0]+1)%3 || seq[2] != (seq[1]+1)%3 {
		t.Errorf("requests without a session went to %v, want round robin over connections", seq)
	}
}

func TestStreamsAndCancels(t *testing.T) {
	bs, urls := startBackends(t, 1)
	_, base := startFront(t, urls, SessionHash)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/stream", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// The event arrives while the backend still holds the stream open.
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "id: e-1\n" {
		t.Fatalf("first line %q, %v: want the event before the stream ends", line, err)
	}
	cancel()
	select {
	case <-bs[0].canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("the backend request was not canceled when the client went away")
	}
}

func TestParsePolicy(t *testing.T) {
	for _, p := range []Policy{RoundRobin, SessionHash} {
		got, err := ParsePolicy(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v", p.String(), got, err)
		}
	}
	if _, err := ParsePolicy("maglev"); err == nil {
		t.Error("ParsePolicy accepted maglev")
	}
	if _, err := New(nil, RoundRobin); err == nil {
		t.Error("New accepted no backends")
	}
}

// TestFullDuplex: the front streams both ways at once, as Envoy does. The
// backend answers before it read the request body and echoes the body as
// it arrives; the client sends the second half only once the answer
// started. A front that consumed the rest of the request body before
// answering would stall here.
func TestFullDuplex(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		buf := make([]byte, 64)
		for {
			n, err := r.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(backend.Close) // after the front's cleanup: the front holds the backend's request
	u, _ := url.Parse(backend.URL)
	_, base := startFront(t, []*url.URL{u}, RoundRobin)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	// The client's transport waits for its body writer when the request
	// fails: end the body with the test's deadline.
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	defer stop()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", pr)
	go func() { _, _ = pw.Write([]byte("first half\n")) }()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the answer did not start while the request body was still open: %v", err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != "first half\n" {
		t.Fatalf("echo %q, %v; want the first half", line, err)
	}
	_, _ = pw.Write([]byte("second half\n"))
	pw.Close()
	if rest, err := io.ReadAll(r); err != nil || string(rest) != "second half\n" {
		t.Fatalf("echo %q, %v; want the second half, sent after the answer started", rest, err)
	}
}
