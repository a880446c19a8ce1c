package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
)

// rawClient speaks Streamable HTTP by hand, for scenarios that need to cut a
// stream at a chosen event.
type rawClient struct {
	base string
	http *http.Client
}

// sseEvent is one server-sent event.
type sseEvent struct {
	id, name, data string
}

// sseReader reads server-sent events (LF or CRLF line ends).
type sseReader struct{ br *bufio.Reader }

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReader(r)} }

// next returns the next event with an ID or data, or the read error.
func (r *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	var data []string
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			return sseEvent{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if ev.id != "" || len(data) > 0 {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id = value
		case "event":
			ev.name = value
		case "data":
			data = append(data, value)
		}
	}
}

// post sends msg to path (the session header only to /mcp) and returns the
// open response.
func (c *rawClient) post(ctx context.Context, path, sid, msg string, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" && path == "/mcp" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	addHeaders(req, hdr)
	return c.http.Do(req)
}

// addHeaders adds hdr's entries to req as they are (keys not canonicalized).
func addHeaders(req *http.Request, hdr http.Header) {
	for k, vs := range hdr {
		req.Header[k] = vs
	}
}

// openSSE posts msg to /mcp and checks that it is answered with an event
// stream.
func (c *rawClient) openSSE(ctx context.Context, sid, msg string, hdr http.Header) (*http.Response, error) {
	resp, err := c.post(ctx, "/mcp", sid, msg, hdr)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("POST /mcp: %s %q: %s", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	return resp, nil
}

// call posts a request and reads its SSE answer to the end; it returns the
// answer's events.
func (c *rawClient) call(ctx context.Context, sessionID, msg string) ([]sseEvent, http.Header, error) {
	resp, err := c.openSSE(ctx, sessionID, msg, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var evs []sseEvent
	r := newSSEReader(resp.Body)
	for {
		ev, err := r.next()
		if err == io.EOF {
			return evs, resp.Header, nil // the stream ended cleanly
		}
		if err != nil {
			return evs, nil, fmt.Errorf("POST /mcp answer: %w", err)
		}
		evs = append(evs, ev)
	}
}

// initialize opens a Streamable HTTP session (the initialize call, read to
// its clean end) and returns its ID. The reference upstream needs no
// notifications/initialized, so the client saves that request.
func (c *rawClient) initialize(ctx context.Context) (string, error) {
	_, h, err := c.call(ctx, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`, callInitialize))
	if err != nil {
		return "", fmt.Errorf("initialize: %w", err)
	}
	sid := h.Get("Mcp-Session-Id")
	if sid == "" {
		return "", errors.New("initialize: no Mcp-Session-Id")
	}
	return sid, nil
}

// openStream sends GET path (/mcp with the session, or /sse), with a
// Last-Event-ID when cursor is set and the headers hdr, and returns the open
// response.
func (c *rawClient) openStream(ctx context.Context, path, sessionID, cursor string, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if path == "/mcp" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	if cursor != "" {
		req.Header.Set("Last-Event-ID", cursor)
	}
	addHeaders(req, hdr)
	return c.http.Do(req)
}

// injectProgress makes the upstream emit a progress notification for
// another request to the session's default stream and returns its ID.
func (tg *target) injectProgress(t *testing.T, sessionID, message string) string {
	t.Helper()
	body, _ := json.Marshal(dualstack.ProgressRequest{SessionID: sessionID, ProgressToken: "background", Progress: 1, Message: message})
	resp, err := tg.http.Post(tg.upstreamURL+"/debug/progress", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("upstream /debug/progress: %v", err)
	}
	defer resp.Body.Close()
	var out dualstack.ProgressResponse
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		t.Fatalf("upstream /debug/progress: %s", resp.Status)
	}
	return out.EventID
}

// openStreams returns how many streams the upstream holds open for the
// session.
func (tg *target) openStreams(t *testing.T, sessionID string) int {
	t.Helper()
	var sessions []dualstack.SessionInfo
	tg.getJSON(t, "/debug/sessions", &sessions)
	for _, s := range sessions {
		if s.ID == sessionID {
			return s.OpenStreams
		}
	}
	return 0
}
