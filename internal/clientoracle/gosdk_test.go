package clientoracle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goView is what the official Go SDK's streamable client (go-sdk v1.8.0,
// mcp.StreamableClientTransport) makes of a POST response stream: the
// messages its Connection reads, how the call ends, and the Last-Event-ID
// and delay of its reconnect.
type goView struct {
	// Messages are the messages Connection.Read returned, re-encoded.
	Messages []string
	// End is how the call ended: "reconnected" (the client resumed with a
	// GET, answered with the call's result), "terminated without response"
	// (the stream ended and the client had no event ID to resume from), or
	// the connection's error.
	End string
	// LastEventID is the reconnect GET's Last-Event-ID, as the upstream
	// reads it (trimmed of optional whitespace); "" when there was none.
	LastEventID string
	// Delay is the time between the end of the body and the reconnect (in
	// the bubble's fake clock: the SDK's retry handling, exactly).
	Delay time.Duration
}

// callID is the ID of the call whose response stream the client reads; no
// corpus stream answers it, so the client reads every event and then
// reconnects or gives up.
const callID = "oracle-call"

// finalResult is the reconnect GET's answer: the call's response.
const finalResult = `data: {"jsonrpc":"2.0","id":"` + callID + `","result":{}}` + "\n\n"

// player is the upstream the client talks to: an http.RoundTripper that
// answers the POST with the stream's bytes and the
// reconnect GET with the call's result. It is in memory, not a loopback
// socket, so that the client runs inside a synctest bubble, where its
// reconnect backoff (1–2 s without a retry field) takes no real time.
type player struct {
	chunks [][]byte
	mu     sync.Mutex
	eofAt  time.Time
	view   *goView
	gets   int
}

func (p *player) RoundTrip(r *http.Request) (*http.Response, error) {
	// net/http's Transport refuses to send a header value with a control
	// character (an ID the Go SDK read from a line ended by a bare CR holds
	// one); the player does as it does.
	for k, vs := range r.Header {
		for _, v := range vs {
			if !validHeaderValue(v) {
				return nil, fmt.Errorf("net/http: invalid header field value for %q", k)
			}
		}
	}
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	switch r.Method {
	case http.MethodPost:
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		resp.Header.Set("Content-Type", "text/event-stream")
		resp.Header.Set("Mcp-Session-Id", "oracle-session")
		resp.Body = &chunkBody{rest: join(p.chunks), atEOF: func() {
			p.mu.Lock()
			p.eofAt = time.Now()
			p.mu.Unlock()
		}}
	case http.MethodGet:
		p.mu.Lock()
		p.gets++
		if p.gets == 1 {
			p.view.LastEventID = trimOWS(r.Header.Get("Last-Event-ID"))
			p.view.Delay = time.Since(p.eofAt)
		}
		p.mu.Unlock()
		resp.Header.Set("Content-Type", "text/event-stream")
		resp.Body = io.NopCloser(strings.NewReader(finalResult))
	default:
		resp.StatusCode = http.StatusNoContent
		resp.Body = http.NoBody
	}
	return resp, nil
}

// validHeaderValue is httpguts.ValidHeaderFieldValue: no control
// characters but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < ' ' && b != '\t' || b == 0x7f {
			return false
		}
	}
	return true
}

// chunkBody hands the body to the SDK one line (up to '\n', the only line
// end its scanner knows) per Read, and before each Read waits until every
// other goroutine of the bubble is blocked: so the test's reader has taken
// every message the SDK dispatched before the SDK reads on. (Without it,
// the SDK's Connection.Read may return a stream error while messages
// dispatched before it still wait in its channel, so how many messages
// precede an error would depend on scheduling.)
type chunkBody struct {
	rest  []byte
	atEOF func()
	done  bool
}

func (b *chunkBody) Read(p []byte) (int, error) {
	synctest.Wait()
	if len(b.rest) == 0 {
		if !b.done {
			b.done = true
			b.atEOF()
		}
		return 0, io.EOF
	}
	n := len(b.rest)
	if i := bytes.IndexByte(b.rest, '\n'); i >= 0 {
		n = i + 1
	}
	n = copy(p, b.rest[:n])
	b.rest = b.rest[n:]
	return n, nil
}

func (b *chunkBody) Close() error { return nil }

// readGo runs the Go SDK's client over one stream in a synctest bubble.
func readGo(t *testing.T, chunks [][]byte) goView {
	var v goView
	synctest.Test(t, func(t *testing.T) {
		p := &player{chunks: chunks, view: &v}
		tr := &mcp.StreamableClientTransport{
			Endpoint:             "http://upstream.test/mcp",
			HTTPClient:           &http.Client{Transport: p},
			MaxRetries:           1,
			DisableStandaloneSSE: true,
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
		defer cancel()
		conn, err := tr.Connect(ctx)
		if err != nil {
			v.End = "connect: " + err.Error()
			return
		}
		defer conn.Close()
		id, _ := jsonrpc.MakeID(callID)
		call := &jsonrpc.Request{ID: id, Method: "tools/call", Params: json.RawMessage(`{"name":"echo","arguments":{}}`)}
		if err := conn.Write(ctx, call); err != nil {
			v.End = "write: " + err.Error()
			return
		}
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				v.End = "error: " + err.Error()
				return
			}
			if r, ok := msg.(*jsonrpc.Response); ok && r.ID == id {
				v.End = "reconnected"
				if r.Error != nil {
					v.End = r.Error.Error()
				}
				return
			}
			b, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				b = []byte("(cannot encode: " + err.Error() + ")")
			}
			v.Messages = append(v.Messages, string(b))
		}
	})
	return v
}
