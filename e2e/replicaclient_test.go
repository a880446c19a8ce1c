package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
)

// The replicated topology's client plays each scenario by hand, with as few
// requests as the scenario needs: no /debug round trip per scenario (tool
// runs are read once per combination) and no waiting on a timer, only a
// 1 ms in-process poll of the upstream's log (bounded by scenarioStreamWait,
// which only a broken topology reaches). It
// resumes no sooner than the replica that served the cut stream finished it
// ([Replicas.StreamDone]), and it knows a replay is over without waiting:
// once the resume's headers arrived, it makes the upstream emit a marker
// notification to the session's default stream, which is the resumed
// stream, after the replay; if the marker comes before the response, the
// replay skipped it (a silent loss).

// markerToken is the progress token of the end-of-replay marker.
const markerToken = "end-of-replay"

// scenarioStreamWait bounds every exchange of one scenario: only a broken
// topology reaches it.
const scenarioStreamWait = time.Minute

// Call IDs of the scenario client.
const (
	callInitialize = 1
	callTool       = 3
	callRetry      = 4
)

// rpcMessage is the part of a JSON-RPC message the client reads.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken any `json:"progressToken"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func decodeRPC(data string) (rpcMessage, bool) {
	var m rpcMessage
	if data == "" || json.Unmarshal([]byte(data), &m) != nil {
		return rpcMessage{}, false
	}
	return m, true
}

// isResponseTo reports whether ev is the JSON-RPC response to call id (a
// response is whatever carries the id and no method).
func isResponseTo(ev sseEvent, id int) bool {
	m, ok := decodeRPC(ev.data)
	return ok && m.Method == "" && string(m.ID) == fmt.Sprint(id)
}

// isProgress reports whether ev is a progress notification for token.
func isProgress(ev sseEvent, token string) bool {
	m, ok := decodeRPC(ev.data)
	return ok && m.Method == "notifications/progress" && m.Params.ProgressToken == token
}

// scenarioClient is one client of the replicated topology: a rawClient of
// the front door (or of the upstream itself: direct) on its own
// connections, opened anew for every resume.
type scenarioClient struct {
	rawClient
	rs        *Replicas
	transport *http.Transport
}

func newScenarioClient(rs *Replicas, beforeResume func()) *scenarioClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &scenarioClient{
		rawClient: rawClient{base: rs.FrontURL, http: &http.Client{Transport: reconnectingTransport{base: tr, beforeResume: beforeResume}}},
		rs:        rs, transport: tr,
	}
}

// direct makes the client talk to the upstream itself, without the guard.
func (c *scenarioClient) direct() *scenarioClient {
	c.base = c.rs.UpstreamURL
	return c
}

func (c *scenarioClient) close() { c.transport.CloseIdleConnections() }

func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// toolCall is a tools/call of tool with a progress token.
func toolCall(id int, tool, token string) string {
	args := `{"query":"replicas"}`
	if tool == dualstack.ToolSlowOp {
		args = `{"steps":1,"interval_ms":0}`
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,"_meta":{"progressToken":%q}}}`, id, tool, args, token)
}

// callToEnd calls tool on sid and reads the answer to its clean end; it
// returns the response event.
func (c *scenarioClient) callToEnd(ctx context.Context, sid string, id int, tool string, hdr http.Header) (sseEvent, error) {
	resp, err := c.openSSE(ctx, sid, toolCall(id, tool, "p"), hdr)
	if err != nil {
		return sseEvent{}, err
	}
	defer resp.Body.Close()
	var got *sseEvent
	r := newSSEReader(resp.Body)
	for {
		ev, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sseEvent{}, err
		}
		if isResponseTo(ev, id) {
			got = &ev
		}
	}
	if got == nil {
		return sseEvent{}, fmt.Errorf("%s: the stream ended without the response", tool)
	}
	return *got, nil
}

// cutAt calls tool on sid on a stream the upstream holds open after the
// response, reads events until stop says so, then cuts the stream (the
// client goes away) and waits until the replica finished it. It returns
// the ID of the last event read.
func (c *scenarioClient) cutAt(ctx context.Context, sid, tool string, stop func(sseEvent) bool) (string, error) {
	tok := newToken()
	streamCtx, cut := context.WithCancel(ctx)
	defer cut()
	resp, err := c.openSSE(streamCtx, sid, toolCall(callTool, tool, "p"), http.Header{
		dualstack.HeaderHold: {"1"}, StreamTokenHeader: {tok},
	})
	if err != nil {
		return "", err
	}
	r := newSSEReader(resp.Body)
	last := ""
	for {
		ev, err := r.next()
		if err != nil {
			resp.Body.Close()
			return "", fmt.Errorf("%s stream: %w", tool, err)
		}
		if ev.id != "" {
			last = ev.id
		}
		if stop(ev) {
			break
		}
	}
	cut()
	resp.Body.Close()
	return last, c.waitEnded(ctx, tok)
}

func (c *scenarioClient) waitEnded(ctx context.Context, tok string) error {
	if c.base == c.rs.UpstreamURL {
		return c.upstreamIdle(ctx) // no replica to tell
	}
	select {
	case <-c.rs.StreamDone(tok):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the replica did not finish the cut stream: %w", ctx.Err())
	}
}

// resumeResult is what a resume got.
type resumeResult struct {
	status    int    // HTTP status of the resume
	reason    string // data.reason of a forced re-initialization
	delivered bool   // the awaited response came on the resumed stream
}

func (r resumeResult) reinit() bool { return r.status == http.StatusNotFound }

// silentLoss reports a resume that was accepted and did not deliver the
// awaited response.
func (r resumeResult) silentLoss() bool { return r.status/100 == 2 && !r.delivered }

// resume sends GET path (/mcp with the session, or /sse) with the cursor on
// a new connection and, when accepted, reads it until the response to
// callID or the end-of-replay marker.
func (c *scenarioClient) resume(ctx context.Context, path, sid, lastEventID string, callID int) (resumeResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp, err := c.openStream(ctx, path, sid, lastEventID, nil)
	if err != nil {
		return resumeResult{}, fmt.Errorf("resume: %w", err)
	}
	defer resp.Body.Close()
	res := resumeResult{status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		res.reason = cursor.ReinitReason(body)
		if resp.StatusCode != http.StatusNotFound {
			return res, fmt.Errorf("resume answered %s: %s", resp.Status, body)
		}
		return res, nil
	}
	r := newSSEReader(resp.Body)
	if path == "/sse" {
		// A legacy stream starts with its endpoint event, which names the
		// session the marker goes to.
		ev, err := r.next()
		if err != nil || ev.name != "endpoint" {
			return res, fmt.Errorf("resumed legacy stream: first event %+v (%v), want the endpoint event", ev, err)
		}
		u, _ := url.Parse(ev.data)
		sid = u.Query().Get("sessionId")
	}
	// The resumed stream is the session's default stream now: the marker
	// comes after everything the replay holds.
	if _, err := c.rs.Upstream.EmitProgress(sid, markerToken, 1, 0, "end of replay"); err != nil {
		return res, err
	}
	for {
		ev, err := r.next()
		if err != nil {
			return res, fmt.Errorf("resumed stream: %w", err)
		}
		switch {
		case isResponseTo(ev, callID):
			res.delivered = true
			return res, nil
		case isProgress(ev, markerToken):
			return res, nil
		}
	}
}

// retry re-issues the call on a new session after a forced
// re-initialization, as the application must.
func (c *scenarioClient) retry(ctx context.Context, tool string) error {
	sid, err := c.initialize(ctx)
	if err != nil {
		return fmt.Errorf("retry: %w", err)
	}
	_, err = c.callToEnd(ctx, sid, callRetry, tool, nil)
	return err
}

// legacyCut opens the legacy stream, calls tool through the message
// endpoint, reads the stream up to the call's response, cuts it and waits
// until the replica finished it. It returns the session and the cursor.
func (c *scenarioClient) legacyCut(ctx context.Context, tool string) (sid, cursor string, err error) {
	tok := newToken()
	streamCtx, cut := context.WithCancel(ctx)
	defer cut()
	hdr := http.Header{}
	hdr.Set(StreamTokenHeader, tok)
	resp, err := c.openStream(streamCtx, "/sse", "", "", hdr)
	if err != nil {
		return "", "", fmt.Errorf("GET /sse: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("GET /sse: %s", resp.Status)
	}
	r := newSSEReader(resp.Body)
	ev, err := r.next()
	if err != nil || ev.name != "endpoint" {
		return "", "", fmt.Errorf("GET /sse: first event %+v (%v), want the endpoint event", ev, err)
	}
	u, err := url.Parse(ev.data)
	if err != nil {
		return "", "", err
	}
	sid = u.Query().Get("sessionId")
	post, err := c.post(ctx, "/messages?"+u.RawQuery, "", toolCall(callTool, tool, "p"), nil)
	if err != nil {
		return "", "", fmt.Errorf("POST /messages: %w", err)
	}
	_, _ = io.Copy(io.Discard, post.Body)
	post.Body.Close()
	if post.StatusCode != http.StatusAccepted {
		return "", "", fmt.Errorf("POST /messages: %s", post.Status)
	}
	for {
		ev, err := r.next()
		if err != nil {
			return "", "", fmt.Errorf("legacy stream: %w", err)
		}
		if ev.id != "" {
			cursor = ev.id
		}
		if isResponseTo(ev, callTool) {
			break
		}
	}
	cut()
	resp.Body.Close()
	return sid, cursor, c.waitEnded(ctx, tok)
}

// upstreamLogged waits until the upstream logged the response to the
// session's call: a clean resume must find it to replay it.
func (c *scenarioClient) upstreamLogged(ctx context.Context, sid string) error {
	for {
		evs, _ := c.rs.Upstream.Events(sid)
		for _, ev := range evs {
			if ev.Kind == dualstack.KindResponse && isResponseTo(sseEvent{data: string(ev.Data)}, callTool) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the upstream never logged the response: %w", ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// upstreamIdle waits until the upstream noticed every cut: no session has
// an open stream.
func (c *scenarioClient) upstreamIdle(ctx context.Context) error {
	for {
		open := 0
		for _, s := range c.rs.Upstream.Sessions() {
			open += s.OpenStreams
		}
		if open == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the upstream did not notice the cut: %w", ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}
