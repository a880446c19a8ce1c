package seedclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// resumeHeaderWait bounds the wait for the resume's response headers. It
// is apart from ResumeWait so that a refusal slowed by a loaded machine is
// still read as a refusal, not as a timeout.
const resumeHeaderWait = 10 * time.Second

// resume sends GET /mcp with the session and cursor and, once the answer's
// headers arrived, waits up to ResumeWait for the response to callID,
// filling the resume fields of rep.
func (c *client) resume(ctx context.Context, rep *Report, callID int64) {
	start := time.Now()
	defer func() { rep.ResumeDuration = time.Since(start) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	giveUp := time.AfterFunc(resumeHeaderWait, cancel)
	defer giveUp.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.BaseURL+"/mcp", nil)
	if err != nil {
		rep.ResumeError = err.Error()
		return
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", rep.SessionID)
	req.Header.Set("Last-Event-ID", rep.Cursor)
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		rep.ResumeError = err.Error()
		return
	}
	defer resp.Body.Close()
	rep.ResumeStatus = resp.StatusCode
	rep.ResumeContentType = contentType(resp)
	if resp.StatusCode != http.StatusOK || rep.ResumeContentType != "text/event-stream" {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		rep.ResumeBody = string(body)
		return
	}
	giveUp.Reset(c.cfg.ResumeWait)
	er := newEventReader(resp.Body)
	for {
		ev, err := er.next()
		if err != nil {
			if ctx.Err() == nil && !errors.Is(err, io.EOF) {
				rep.ResumeError = err.Error()
			}
			return
		}
		rep.ResumeEvents = append(rep.ResumeEvents, ev)
		if r, ok := responseTo(ev, callID); ok {
			if rep.ResultArrived {
				rep.DuplicateResults++
				return
			}
			rep.ResultArrived = true
			rep.ResultEventID = ev.ID
			rep.ResultText = resultText(r)
			return
		}
	}
}

// retry re-issues the tool call when the result did not arrive: on a new
// session when the resume was answered 404 (forced re-initialization), else
// on the same session (the client's request timeout fired).
func (c *client) retry(ctx context.Context, rep *Report, callID int64) {
	if rep.ResultArrived {
		return
	}
	rep.Retried = true
	sid := rep.SessionID
	if rep.ForcedReinit() {
		var err error
		if sid, err = c.initializeMCP(ctx, callID+100); err != nil {
			rep.RetryError = err.Error()
			return
		}
		rep.Reinitialized = true
	}
	rep.RetrySessionID = sid
	req, err := call(callID+1, "tools/call", searchParams(c.cfg.Query, "retry"))
	if err != nil {
		rep.RetryError = err.Error()
		return
	}
	resp, _, _, err := c.callMCP(ctx, sid, req)
	if err != nil {
		rep.RetryError = err.Error()
		return
	}
	rep.RetryResultArrived = resp.Error == nil
	if resp.Error != nil {
		rep.RetryError = resp.Error.Error()
	}
}

// finish reads the run counts around the optional retry.
func (c *client) finish(ctx context.Context, rep *Report, callID int64) error {
	runs, err := c.toolRuns(ctx)
	if err != nil {
		return err
	}
	rep.ToolRunsBeforeRetry = runs
	rep.ToolRuns = runs
	if !c.cfg.Retry {
		return nil
	}
	c.retry(ctx, rep, callID)
	if rep.ToolRuns, err = c.toolRuns(ctx); err != nil {
		return err
	}
	return nil
}

// readUntilResponse reads events from er until the response to id, appending
// every event ID to ids. It returns the response event.
func readUntilResponse(er *eventReader, id int64, ids *[]string) (Event, *jsonrpc.Response, error) {
	for {
		ev, err := er.next()
		if err != nil {
			return Event{}, nil, err
		}
		if ev.ID != "" {
			*ids = append(*ids, ev.ID)
		}
		if r, ok := responseTo(ev, id); ok {
			return ev, r, nil
		}
	}
}
