package seedclient

import (
	"fmt"
	"strings"
	"time"
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
	// ResumeDuration is how long the client spent on the resume before it
	// had the result, was refused, or gave up after Config.ResumeWait.
	ResumeDuration time.Duration

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

	// ToolRunsAtStart is search_index's run count on the upstream before the
	// scenario began (non-zero when several scenarios share one upstream).
	ToolRunsAtStart int
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
	// CleanCallEventIDs are the event IDs of the clean calls made after the
	// cut (Config.CleanCallsAfterCut), in order.
	CleanCallEventIDs []string
	// ToolRuns is search_index's final run count on the upstream.
	ToolRuns int
}

// Runs returns how many times search_index ran during this scenario.
func (r *Report) Runs() int { return r.ToolRuns - r.ToolRunsAtStart }

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
		strings.Join(r.ResumeEventIDs(), " "), result, r.Retried, r.Reinitialized, r.Runs())
}

// Describe tells in plain words what happened to the tool-call result, for a
// reader who has not read the seed.
func (r *Report) Describe() string {
	var b strings.Builder
	switch r.Scenario {
	case "seed":
		fmt.Fprintf(&b, "The client opened a legacy SSE stream (session %s), called search_index and read events %s.\n",
			r.SessionID, strings.Join(r.StreamEventIDs, ", "))
		fmt.Fprintf(&b, "The connection was cut right after %s (the tool result) arrived, before the client could process it.\n", r.Cursor)
		if r.InjectedEventID != "" {
			fmt.Fprintf(&b, "Meanwhile the server sent %s, a progress update for an unrelated request.\n", r.InjectedEventID)
		}
		fmt.Fprintf(&b, "The client reconnected on the Streamable HTTP endpoint with Last-Event-ID: %s.\n", r.Cursor)
	default:
		fmt.Fprintf(&b, "The client called search_index on Streamable HTTP (session %s) and read events %s; then it resumed with Last-Event-ID: %s.\n",
			r.SessionID, strings.Join(r.StreamEventIDs, ", "), r.Cursor)
	}
	switch {
	case r.ResumeStatus == 0:
		fmt.Fprintf(&b, "The resume failed: %s.\n", r.ResumeError)
	case r.ForcedReinit():
		fmt.Fprintf(&b, "The resume was refused at once (in %s) with HTTP 404 (%s): the client knows its session is unusable and starts a new one.\n",
			roundDuration(r.ResumeDuration), strings.TrimSpace(r.ResumeBody))
	case r.ResumeStatus/100 != 2:
		fmt.Fprintf(&b, "The resume was answered HTTP %d: %s\n", r.ResumeStatus, strings.TrimSpace(r.ResumeBody))
	case r.ResultArrived && r.ResultEventID != "" && r.Scenario != "clean_resume":
		fmt.Fprintf(&b, "The resume was accepted and replayed the result (%s): nothing was lost.\n", r.ResultEventID)
	case r.ResultArrived && r.DuplicateResults == 0:
		fmt.Fprintf(&b, "The resume was accepted; the result had already been processed and was not sent again.\n")
	case r.ResultArrived:
		fmt.Fprintf(&b, "The resume was accepted; the result had already been processed, and came again %d time(s).\n", r.DuplicateResults)
	default:
		replayed := strings.Join(r.ResumeEventIDs(), ", ")
		if replayed == "" {
			replayed = "nothing"
		}
		fmt.Fprintf(&b, "The resume was accepted and replayed %s, but never the tool result: it was silently lost, and the client waited until its timeout (%s).\n",
			replayed, roundDuration(r.ResumeDuration))
	}
	if r.Retried {
		where := "on the same session"
		if r.Reinitialized {
			where = "on a new session"
		}
		fmt.Fprintf(&b, "The client retried the call %s.\n", where)
	}
	fmt.Fprintf(&b, "search_index ran %d time(s) on the server.", r.Runs())
	return b.String()
}

// roundDuration rounds d for a reader: to the millisecond, or to 10µs below
// a millisecond so that a fast answer does not read "0s".
func roundDuration(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}
