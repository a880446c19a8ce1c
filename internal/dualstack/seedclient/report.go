package seedclient

import (
	"fmt"
	"strings"
)

// Report is what one scenario run observed, from the client's side and from
// the upstream's counters.
type Report struct {
	// Scenario is "seed", "drain_race" or "clean_resume".
	Scenario string
	// BaseURL is the front door the client used.
	BaseURL string
	// SessionID is the session the client resumed (the bridged legacy
	// sessionId in the seed).
	SessionID string
	// StreamEventIDs are the event IDs the client read on its first stream,
	// in order, as they arrived (through a proxy they may carry a prefix).
	StreamEventIDs []string
	// Cursor is the Last-Event-ID the client resumed with: the last ID it
	// read, which is the tool result's when the stream was cut before the
	// result was dispatched.
	Cursor string
	// CutObserved tells whether the upstream reported the first stream closed
	// before the scenario went on.
	CutObserved bool
	// InjectedEventID is the upstream's ID of the progress notification for
	// another request emitted after the cut (the seed's e-105), if any.
	InjectedEventID string

	// ResumeStatus is the HTTP status of the resume (0 if it failed).
	ResumeStatus int
	// ResumeContentType is the resume answer's media type.
	ResumeContentType string
	// ResumeBody is the body of a resume answer that is not an event stream
	// (e.g. a forced re-initialization's JSON-RPC error).
	ResumeBody string
	// ResumeEvents are the events read on the resumed stream before the
	// result arrived or the client gave up.
	ResumeEvents []Event
	// ResumeError is a transport error of the resume, if any.
	ResumeError string

	// ResultArrived tells whether the tool result reached the application
	// before any retry (on the first stream when it was not cut, else on the
	// resumed stream).
	ResultArrived bool
	// ResultEventID is the ID of the event that delivered the result.
	ResultEventID string
	// ResultText is the result's text.
	ResultText string
	// DuplicateResults counts deliveries of the result after the first one
	// (a resume that replayed a result the client had already dispatched).
	DuplicateResults int

	// ToolRunsBeforeRetry is search_index's run count after the resume.
	ToolRunsBeforeRetry int
	// Retried tells whether the client retried the tool call.
	Retried bool
	// Reinitialized tells whether the retry ran on a new session because the
	// resume was answered 404.
	Reinitialized bool
	// RetrySessionID is the session the retry ran on.
	RetrySessionID string
	// RetryResultArrived tells whether the retry got a result.
	RetryResultArrived bool
	// RetryError is why the retry failed, if it did.
	RetryError string
	// ToolRuns is search_index's final run count.
	ToolRuns int
}

// ResumeEventIDs returns the IDs of the events read on the resumed stream.
func (r *Report) ResumeEventIDs() []string {
	out := make([]string, 0, len(r.ResumeEvents))
	for _, ev := range r.ResumeEvents {
		if ev.ID != "" {
			out = append(out, ev.ID)
		}
	}
	return out
}

// SilentLoss reports the seed's signature: the resume was accepted but the
// tool result never arrived.
func (r *Report) SilentLoss() bool {
	return r.ResumeStatus/100 == 2 && !r.ResultArrived
}

// ForcedReinit reports that the resume was answered 404, which tells an MCP
// client to start a new session.
func (r *Report) ForcedReinit() bool { return r.ResumeStatus == 404 }

// String is a one-line summary.
func (r *Report) String() string {
	result := "lost"
	switch {
	case r.ResultArrived:
		result = "delivered(" + r.ResultEventID + ")"
	case r.ForcedReinit():
		result = "refused"
	}
	return fmt.Sprintf("scenario=%s session=%s stream=[%s] cursor=%s resume=%d resumed=[%s] result=%s retried=%t reinit=%t tool_runs=%d",
		r.Scenario, r.SessionID, strings.Join(r.StreamEventIDs, " "), r.Cursor, r.ResumeStatus,
		strings.Join(r.ResumeEventIDs(), " "), result, r.Retried, r.Reinitialized, r.ToolRuns)
}
