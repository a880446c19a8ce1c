package seedclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// streamTimeout bounds the first stream of a scenario.
const streamTimeout = 30 * time.Second

// Call IDs of the seed client's requests.
const (
	idInitialize = 1
	idToolsList  = 2
	idSearch     = 3
	idCleanCall  = 100 // and up: the clean calls after a cut
)

// RunSeed plays the seed incident against cfg.BaseURL:
//
//  1. GET /sse, read the endpoint event (its sessionId is the session);
//  2. POST initialize (2024-11-05), notifications/initialized, tools/list and
//     a tools/call of search_index with progress token "search-1" to the
//     endpoint, reading every event on the legacy stream (against the bare
//     upstream started at e-100: e-100 … e-104, e-104 being the result);
//  3. cut the stream as soon as the result's event was read, before it is
//     dispatched: the result does not count as arrived;
//  4. wait for the upstream to notice, then make it emit a progress
//     notification for another request (the seed's e-105);
//  5. resume with GET /mcp, Mcp-Session-Id = the legacy sessionId,
//     Last-Event-ID = the last ID read, and wait cfg.ResumeWait for the
//     result;
//  6. with cfg.Retry, retry the call if the result did not arrive.
//
// An error means the scenario could not be played; what the resume did is in
// the report.
func RunSeed(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &client{cfg: cfg}
	rep := &Report{Scenario: "seed", BaseURL: cfg.BaseURL}
	if rep.ToolRunsAtStart, err = c.toolRuns(ctx); err != nil {
		return nil, err
	}

	streamCtx, cut := context.WithTimeout(ctx, streamTimeout)
	defer cut()
	req, err := http.NewRequestWithContext(streamCtx, http.MethodGet, cfg.BaseURL+"/sse", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /sse: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || contentType(resp) != "text/event-stream" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, &StatusError{Op: "GET /sse", Status: resp.StatusCode, Body: string(body)}
	}
	er := newEventReader(resp.Body)
	first, err := er.next()
	if err != nil {
		return nil, fmt.Errorf("GET /sse: reading the endpoint event: %w", err)
	}
	if first.Name != "endpoint" {
		return nil, fmt.Errorf("GET /sse: first event is %q, want endpoint", first.Name)
	}
	if first.ID != "" {
		rep.StreamEventIDs = append(rep.StreamEventIDs, first.ID)
	}
	endpoint, err := c.resolve(string(first.Data))
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(endpoint)
	rep.SessionID = u.Query().Get("sessionId")
	if rep.SessionID == "" {
		return nil, fmt.Errorf("endpoint event %q carries no sessionId", first.Data)
	}

	// The handshake and the call, each followed by reading its answer.
	steps := []struct {
		id     int64
		method string
		params any
	}{
		{idInitialize, "initialize", initializeParams("2024-11-05")},
		{idToolsList, "tools/list", map[string]any{}},
		{idSearch, "tools/call", searchParams(cfg.Query, "search-1")},
	}
	for _, s := range steps {
		msg, err := call(s.id, s.method, s.params)
		if err != nil {
			return nil, err
		}
		if err := c.postLegacy(ctx, endpoint, msg); err != nil {
			return nil, err
		}
		ev, r, err := readUntilResponse(er, s.id, &rep.StreamEventIDs)
		if err != nil {
			return nil, fmt.Errorf("legacy stream: waiting for the %s response: %w", s.method, err)
		}
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %w", s.method, r.Error)
		}
		if s.id == idInitialize {
			if err := c.postLegacy(ctx, endpoint, notification("notifications/initialized")); err != nil {
				return nil, err
			}
		}
		if s.id == idSearch {
			// Read but not dispatched: the read loop is cut here.
			rep.Cursor = ev.ID
		}
	}
	cut()
	resp.Body.Close()

	rep.CutObserved = c.waitStreamsClosed(ctx, rep.SessionID)
	if rep.InjectedEventID, err = c.injectProgress(ctx, rep.SessionID); err != nil {
		return nil, err
	}
	c.resume(ctx, rep, idSearch)
	if err := c.finish(ctx, rep, idSearch); err != nil {
		return rep, err
	}
	return rep, nil
}
