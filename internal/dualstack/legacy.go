package dualstack

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// serveLegacyStream answers GET /sse: a new session, bridged into the one
// session store, whose stream starts with the endpoint event (no ID) and then
// carries every event of the session until the client goes away. The session
// outlives the stream so that /mcp can resume it.
func (srv *Server) serveLegacyStream(w http.ResponseWriter, r *http.Request) {
	st := newStream(streamLegacy, TransportSSE, LayoutDefault, "sse")
	var sess *Session
	var replay []Event
	if c := r.Header.Get(headerLastEventID); c != "" && srv.opts.LegacyResume {
		var err error
		if sess, replay, err = srv.resumeLegacy(c, st); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		note(r, slog.String("replay", srv.opts.Replay.String()), slog.Int("replayed", len(replay)))
	} else {
		sess = newSession(TransportSSE, srv.opts.SessionIDBytes, LayoutDefault)
		srv.sessions.add(sess)
		sess.attach(st)
	}
	defer sess.detach(st)
	note(r, slog.String("session", sess.id))

	sseHeaders(w)
	endpoint := "/messages?sessionId=" + url.QueryEscape(sess.id)
	if _, err := w.Write(encodeEvent("endpoint", "", []byte(endpoint))); err != nil {
		return
	}
	if err := srv.writeBurst(w, LayoutDefault, replay); err != nil {
		return
	}
	if err := http.NewResponseController(w).Flush(); err != nil {
		return
	}
	n := srv.pump(r.Context(), w, st, true)
	note(r, slog.Int("events", n))
}

// serveLegacyMessage answers POST /messages?sessionId=: it runs the message and
// answers 202; the response goes to the session's stream (the legacy stream
// while open, else the bridged GET /mcp stream, else only the log).
func (srv *Server) serveLegacyMessage(w http.ResponseWriter, r *http.Request) {
	sid := r.URL.Query().Get("sessionId")
	if sid == "" {
		http.Error(w, "missing sessionId query parameter", http.StatusBadRequest)
		return
	}
	note(r, slog.String("session", sid))
	sess := srv.sessions.get(sid)
	if sess == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && mediaType(ct) != "application/json" {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		http.Error(w, "invalid JSON-RPC message: "+err.Error(), http.StatusBadRequest)
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		note(r, slog.String("rpc", req.Method))
		if resp := srv.handle(sess, nil, req); resp != nil {
			ev, err := srv.emit(sess, nil, resp, false)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			note(r, slog.String("response_event", ev.ID.String()), slog.String("carried_by", string(ev.Transport)))
		}
	}
	w.WriteHeader(http.StatusAccepted)
}

// resumeLegacy finds the session whose log holds cursor and resumes st as
// its legacy stream ([Options.LegacyResume]).
func (srv *Server) resumeLegacy(cursor string, st *stream) (*Session, []Event, error) {
	id, err := ParseEventID(cursor)
	if err != nil {
		return nil, nil, fmt.Errorf("malformed Last-Event-ID: %w", err)
	}
	for _, sess := range srv.sessions.all() {
		if replay, err := sess.resume(id.String(), srv.opts.Replay, st); err == nil {
			srv.resumes.Add(1)
			return sess, replay, nil
		}
	}
	return nil, nil, fmt.Errorf("%w %s: not an event of any session", errUnknownCursor, id)
}
