package seedclient

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
)

// RunDrainRace plays the same-transport drain race on Streamable HTTP:
// initialize on /mcp, then a tools/call of search_index whose SSE answer the
// upstream holds open after the result ("X-Dualstack-Hold: 1"); the client
// reads up to the result's event and is cut before dispatching it, then
// resumes with GET /mcp and Last-Event-ID = that event's ID.
func RunDrainRace(ctx context.Context, cfg Config) (*Report, error) {
	return runStreamable(ctx, cfg, "drain_race", true)
}

// RunCleanResume is the no-false-alarm counterpart of [RunDrainRace]: the call's
// stream ends cleanly after the result, which the client dispatches; the
// client then opens GET /mcp with Last-Event-ID = the last ID it read, which
// must be accepted and must not deliver the result again.
func RunCleanResume(ctx context.Context, cfg Config) (*Report, error) {
	return runStreamable(ctx, cfg, "clean_resume", false)
}

func runStreamable(ctx context.Context, cfg Config, scenario string, cutBeforeDispatch bool) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &client{cfg: cfg}
	rep := &Report{Scenario: scenario, BaseURL: cfg.BaseURL}
	if rep.ToolRunsAtStart, err = c.toolRuns(ctx); err != nil {
		return nil, err
	}
	if rep.SessionID, err = c.initializeMCP(ctx, idInitialize); err != nil {
		return nil, err
	}

	streamCtx, cut := context.WithTimeout(ctx, streamTimeout)
	defer cut()
	msg, err := call(idSearch, "tools/call", searchParams(cfg.Query, "search-1"))
	if err != nil {
		return nil, err
	}
	var extra http.Header
	if cutBeforeDispatch {
		extra = http.Header{"X-Dualstack-Hold": {"1"}}
	}
	resp, err := c.postMCP(streamCtx, rep.SessionID, msg, extra)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || contentType(resp) != "text/event-stream" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, &StatusError{Op: "POST /mcp tools/call (want an SSE answer)", Status: resp.StatusCode, Body: string(body)}
	}
	er := newEventReader(resp.Body)
	ev, r, err := readUntilResponse(er, idSearch, &rep.StreamEventIDs)
	if err != nil {
		return nil, fmt.Errorf("POST stream: waiting for the tools/call response: %w", err)
	}
	rep.Cursor = rep.StreamEventIDs[len(rep.StreamEventIDs)-1]
	if cutBeforeDispatch {
		cut()
		resp.Body.Close()
		rep.CutObserved = c.waitStreamsClosed(ctx, rep.SessionID)
		if err := c.cleanCalls(ctx, rep); err != nil {
			return rep, err
		}
	} else {
		rep.ResultArrived = true
		rep.ResultEventID = ev.ID
		rep.ResultText = resultText(r)
		_, _ = io.Copy(io.Discard, resp.Body) // the stream ends cleanly
	}
	c.resume(ctx, rep, idSearch)
	if err := c.finish(ctx, rep, idSearch); err != nil {
		return rep, err
	}
	return rep, nil
}

// cleanCalls makes cfg.CleanCallsAfterCut slow_op calls on the session, each
// answered on its own SSE stream read to its end, and records their IDs.
func (c *client) cleanCalls(ctx context.Context, rep *Report) error {
	for i := range c.cfg.CleanCallsAfterCut {
		msg, err := call(int64(idCleanCall+i), "tools/call", map[string]any{
			"name": dualstack.ToolSlowOp, "arguments": map[string]any{"steps": 1, "interval_ms": 0}})
		if err != nil {
			return err
		}
		_, ids, _, err := c.callMCP(ctx, rep.SessionID, msg)
		if err != nil {
			return fmt.Errorf("clean call %d after the cut: %w", i+1, err)
		}
		rep.CleanCallEventIDs = append(rep.CleanCallEventIDs, ids...)
	}
	return nil
}
