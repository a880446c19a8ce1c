package dualstack

import (
	"encoding/json"
	"io"
	"net/http"
)

// Stats is the JSON document served at GET /debug/stats.
type Stats struct {
	// SearchIndexRuns counts executions of search_index.
	SearchIndexRuns int `json:"search_index_runs"`
	// SlowOpRuns counts executions of slow_op.
	SlowOpRuns int `json:"slow_op_runs"`
	// Sessions counts live sessions.
	Sessions int `json:"sessions"`
	// Resumes counts accepted GET /mcp resumes.
	Resumes int `json:"resumes"`
	// NextEventID is the ID the allocator mints next.
	NextEventID string `json:"next_event_id"`
	// Replay is the replay contract ("exclusive" or "inclusive").
	Replay string `json:"replay"`
	// Layout is the default layout of new Streamable HTTP sessions.
	Layout string `json:"layout"`
}

// Stats returns the server's counters.
func (srv *Server) Stats() Stats {
	return Stats{
		SearchIndexRuns: srv.ToolRuns(ToolSearchIndex),
		SlowOpRuns:      srv.ToolRuns(ToolSlowOp),
		Sessions:        len(srv.sessions.all()),
		Resumes:         srv.Resumes(),
		NextEventID:     srv.NextEventID().String(),
		Replay:          srv.opts.Replay.String(),
		Layout:          srv.opts.Layout.String(),
	}
}

// index is served at GET /: what this server is and where its endpoints are.
const index = `mcp-dualstack: reference MCP upstream with the seed incident's bug on purpose
(one event-ID allocator for both transports, legacy sessions bridged into /mcp,
replay strictly after the cursor unless -replay inclusive; -layout python
answers /mcp as the official Python SDK's server does, with 2025-11-25 polling).

legacy HTTP+SSE    GET /sse, POST /messages?sessionId=
Streamable HTTP    POST, GET, DELETE /mcp
debug              GET /debug/stats, GET /debug/sessions,
                   GET /debug/events?sessionId=, POST /debug/progress
`

func serveIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, index)
}

func (srv *Server) serveStats(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, srv.Stats())
}

// EventJSON is one logged event as GET /debug/events?sessionId= serves it.
type EventJSON struct {
	ID        string          `json:"id"`
	Wire      string          `json:"wire,omitempty"` // the ID on the wire, when not ID
	Stream    string          `json:"stream,omitempty"`
	Kind      EventKind       `json:"kind"`
	Transport Transport       `json:"transport"`
	Data      json.RawMessage `json:"data,omitempty"`
}

func (srv *Server) serveSessions(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, srv.Sessions())
}

func (srv *Server) serveEvents(w http.ResponseWriter, r *http.Request) {
	evs, ok := srv.Events(r.URL.Query().Get("sessionId"))
	if !ok {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	out := make([]EventJSON, len(evs))
	for i, ev := range evs {
		out[i] = EventJSON{ID: ev.ID.String(), Wire: ev.Wire, Stream: ev.Stream, Kind: ev.Kind, Transport: ev.Transport}
		if len(ev.Data) > 0 {
			out[i].Data = ev.Data
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// ProgressRequest is the body of POST /debug/progress, which emits a
// notifications/progress to a session's default stream
// ([Server.EmitProgress]).
type ProgressRequest struct {
	SessionID     string  `json:"sessionId"`
	ProgressToken any     `json:"progressToken"`
	Progress      float64 `json:"progress"`
	Total         float64 `json:"total,omitempty"`
	Message       string  `json:"message,omitempty"`
}

// ProgressResponse answers POST /debug/progress with the minted event ID.
type ProgressResponse struct {
	EventID string `json:"eventId"`
}

func (srv *Server) serveEmitProgress(w http.ResponseWriter, r *http.Request) {
	var in ProgressRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, maxBody)).Decode(&in); err != nil {
		http.Error(w, "invalid progress request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if in.ProgressToken == nil {
		in.ProgressToken = "other-request"
	}
	id, err := srv.EmitProgress(in.SessionID, in.ProgressToken, in.Progress, in.Total, in.Message)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	writeJSON(w, http.StatusOK, ProgressResponse{EventID: id.String()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
