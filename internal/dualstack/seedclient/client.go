package seedclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Config says where a scenario runs and how long it waits.
type Config struct {
	// BaseURL is the front door the client talks to: the upstream itself, or
	// a proxy in front of it (e.g. "http://127.0.0.1:10000").
	BaseURL string
	// ControlURL is the upstream, for its /debug hooks (tool run count,
	// stream state, the injected progress notification). Default BaseURL.
	ControlURL string
	// HTTPClient makes every request. Default: a client without timeout.
	HTTPClient *http.Client
	// ResumeWait is how long the client waits on the resumed stream, from
	// its response headers, for the tool result before it gives up (its
	// request timeout). Default 1s.
	ResumeWait time.Duration
	// CutWait bounds the wait for the upstream to notice a cut stream before
	// the scenario goes on. Default 2s.
	CutWait time.Duration
	// Retry retries the tool call when the result did not arrive: on the same
	// session after a silent loss, on a new session after a 404.
	Retry bool
	// CleanCallsAfterCut is how many more tool calls (slow_op, one step)
	// the client makes on the same session after the drain race's cut and
	// before it resumes, each read to its clean end: an agent that keeps
	// working while its client waits out a reconnect backoff.
	CleanCallsAfterCut int
	// Query is the search_index query. Default "migration window".
	Query string
}

func (c Config) withDefaults() (Config, error) {
	if c.BaseURL == "" {
		return c, fmt.Errorf("seedclient: BaseURL is empty")
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.ControlURL == "" {
		c.ControlURL = c.BaseURL
	}
	c.ControlURL = strings.TrimRight(c.ControlURL, "/")
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.ResumeWait <= 0 {
		c.ResumeWait = time.Second
	}
	if c.CutWait <= 0 {
		c.CutWait = 2 * time.Second
	}
	if c.Query == "" {
		c.Query = "migration window"
	}
	return c, nil
}

// client is the raw MCP client of the scenarios: it speaks both transports by
// hand so that it can be cut at exactly the right moment.
type client struct {
	cfg Config
}

// call builds a JSON-RPC call with a numeric ID.
func call(id int64, method string, params any) (*jsonrpc.Request, error) {
	rid, err := jsonrpc.MakeID(float64(id))
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s params: %w", method, err)
	}
	return &jsonrpc.Request{ID: rid, Method: method, Params: raw}, nil
}

// notification builds a JSON-RPC notification.
func notification(method string) *jsonrpc.Request {
	return &jsonrpc.Request{Method: method, Params: json.RawMessage(`{}`)}
}

// initializeParams is the client's initialize request.
func initializeParams(version string) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "seedclient", "version": "0.1.0"},
	}
}

// searchParams is a tools/call of search_index with a progress token.
func searchParams(query, token string) map[string]any {
	return map[string]any{
		"name":      dualstack.ToolSearchIndex,
		"arguments": map[string]any{"query": query},
		"_meta":     map[string]any{"progressToken": token},
	}
}

// responseTo decodes ev and returns it when it is the response to id.
func responseTo(ev Event, id int64) (*jsonrpc.Response, bool) {
	if len(ev.Data) == 0 {
		return nil, false
	}
	msg, err := jsonrpc.DecodeMessage(ev.Data)
	if err != nil {
		return nil, false
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return nil, false
	}
	if n, ok := resp.ID.Raw().(int64); !ok || n != id {
		return nil, false
	}
	return resp, true
}

// resultText returns the first text content of a tools/call result.
func resultText(resp *jsonrpc.Response) string {
	if resp.Error != nil {
		return "error: " + resp.Error.Error()
	}
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(resp.Result, &r) == nil && len(r.Content) > 0 {
		return r.Content[0].Text
	}
	return string(resp.Result)
}

// postLegacy posts msg to the legacy message endpoint and expects 2xx.
func (c *client) postLegacy(ctx context.Context, endpoint string, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s: %s", endpoint, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// postMCP posts msg to /mcp with the given session and extra headers and
// returns the open response; the caller closes its body.
func (c *client) postMCP(ctx context.Context, sessionID string, msg jsonrpc.Message, extra http.Header) (*http.Response, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+"/mcp", bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	for k, vs := range extra {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("POST /mcp: %w", err)
	}
	return resp, nil
}

// callMCP posts a call to /mcp and reads its answer, JSON or SSE, up to the
// response. It returns the response, the IDs of the SSE events read, and the
// Mcp-Session-Id response header.
func (c *client) callMCP(ctx context.Context, sessionID string, req *jsonrpc.Request) (*jsonrpc.Response, []string, string, error) {
	resp, err := c.postMCP(ctx, sessionID, req, nil)
	if err != nil {
		return nil, nil, "", err
	}
	defer resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	id, _ := req.ID.Raw().(int64)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, nil, sid, &StatusError{Op: "POST /mcp " + req.Method, Status: resp.StatusCode, Body: string(body)}
	}
	switch mt := contentType(resp); mt {
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		if err != nil {
			return nil, nil, sid, err
		}
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			return nil, nil, sid, fmt.Errorf("POST /mcp %s: %w", req.Method, err)
		}
		r, ok := msg.(*jsonrpc.Response)
		if !ok {
			return nil, nil, sid, fmt.Errorf("POST /mcp %s: answer is not a response", req.Method)
		}
		return r, nil, sid, nil
	case "text/event-stream":
		er := newEventReader(resp.Body)
		var ids []string
		for {
			ev, err := er.next()
			if err != nil {
				return nil, ids, sid, fmt.Errorf("POST /mcp %s: stream ended before the response: %w", req.Method, err)
			}
			if ev.ID != "" {
				ids = append(ids, ev.ID)
			}
			if r, ok := responseTo(ev, id); ok {
				drain(resp.Body)
				return r, ids, sid, nil
			}
		}
	default:
		return nil, nil, sid, fmt.Errorf("POST /mcp %s: unexpected Content-Type %q", req.Method, mt)
	}
}

// notifyMCP posts a notification to /mcp and expects 202.
func (c *client) notifyMCP(ctx context.Context, sessionID string, n *jsonrpc.Request) error {
	resp, err := c.postMCP(ctx, sessionID, n, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &StatusError{Op: "POST /mcp " + n.Method, Status: resp.StatusCode, Body: string(body)}
	}
	return nil
}

// initializeMCP opens a Streamable HTTP session and returns its ID.
func (c *client) initializeMCP(ctx context.Context, id int64) (string, error) {
	req, err := call(id, "initialize", initializeParams("2025-11-25"))
	if err != nil {
		return "", err
	}
	resp, _, sid, err := c.callMCP(ctx, "", req)
	if err != nil {
		return "", err
	}
	if resp.Error != nil {
		return "", fmt.Errorf("initialize: %w", resp.Error)
	}
	if sid == "" {
		return "", fmt.Errorf("initialize: no Mcp-Session-Id in the answer")
	}
	return sid, c.notifyMCP(ctx, sid, notification("notifications/initialized"))
}

// StatusError is an HTTP answer the scenario did not expect.
type StatusError struct {
	Op     string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.Op, e.Status, strings.TrimSpace(e.Body))
}

func contentType(resp *http.Response) string {
	mt, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// ToolRuns reads search_index's run count from the upstream's /debug/stats.
func (c *client) toolRuns(ctx context.Context) (int, error) {
	var st dualstack.Stats
	if err := c.getJSON(ctx, "/debug/stats", &st); err != nil {
		return 0, err
	}
	return st.SearchIndexRuns, nil
}

func (c *client) getJSON(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.ControlURL+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return &StatusError{Op: "GET " + path, Status: resp.StatusCode, Body: string(body)}
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// waitStreamsClosed polls the upstream until the session has no open stream
// (it noticed the cut) or the wait is over. It reports whether it saw that.
func (c *client) waitStreamsClosed(ctx context.Context, sessionID string) bool {
	deadline := time.Now().Add(c.cfg.CutWait)
	for time.Now().Before(deadline) {
		var sessions []dualstack.SessionInfo
		if err := c.getJSON(ctx, "/debug/sessions", &sessions); err == nil {
			for _, s := range sessions {
				if s.ID == sessionID && s.OpenStreams == 0 {
					return true
				}
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return false
}

// injectProgress makes the upstream emit a notifications/progress for
// another request to the session (the seed's e-105) and returns its ID.
func (c *client) injectProgress(ctx context.Context, sessionID string) (string, error) {
	body, err := json.Marshal(dualstack.ProgressRequest{SessionID: sessionID, ProgressToken: "other-request", Progress: 1, Total: 2, Message: "an unrelated request is halfway"})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.ControlURL+"/debug/progress", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("POST /debug/progress: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return "", &StatusError{Op: "POST /debug/progress", Status: resp.StatusCode, Body: string(b)}
	}
	var out dualstack.ProgressResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	return out.EventID, nil
}

// resolve resolves the legacy endpoint event's data against the base URL.
func (c *client) resolve(ref string) (string, error) {
	base, err := url.Parse(c.cfg.BaseURL + "/sse")
	if err != nil {
		return "", err
	}
	u, err := base.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("endpoint event %q: %w", ref, err)
	}
	return u.String(), nil
}

// drainWait bounds how long drain waits for a stream to end.
const drainWait = 500 * time.Millisecond

// drain reads body to its end, as a client does when the server ends the
// stream after the response, so the stream ends cleanly (a proxy would
// otherwise see a downstream disconnect and count the response as
// unacknowledged). It gives up after drainWait, for a stream held open.
func drain(body io.ReadCloser) {
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, body)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(drainWait):
		body.Close()
		<-done
	}
}
