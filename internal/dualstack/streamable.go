package dualstack

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// errUnknownCursor reports a Last-Event-ID that names no event of the session.
var errUnknownCursor = errors.New("unknown Last-Event-ID")

// serveMCP is the Streamable HTTP endpoint.
func (srv *Server) serveMCP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		srv.postMCP(w, r)
	case http.MethodGet:
		srv.getMCP(w, r)
	case http.MethodDelete:
		srv.deleteMCP(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// postMCP runs one JSON-RPC message. initialize without a session creates
// one; everything else needs a known Mcp-Session-Id (legacy sessions
// included).
func (srv *Server) postMCP(w http.ResponseWriter, r *http.Request) {
	if mediaType(r.Header.Get("Content-Type")) != "application/json" {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported")
		return
	}
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		writeJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "invalid JSON-RPC message: "+err.Error())
		return
	}
	req, isReq := msg.(*jsonrpc.Request)
	var id jsonrpc.ID
	if isReq {
		id = req.ID
		note(r, slog.String("rpc", req.Method))
	}
	if v := r.Header.Get(headerProtocolVersion); v != "" && !slices.Contains(supportedVersions, v) {
		writeJSONRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("unsupported MCP-Protocol-Version %q (supported: %v)", v, supportedVersions))
		return
	}

	sid := r.Header.Get(headerSessionID)
	var sess *Session
	switch {
	case isReq && req.Method == "initialize":
		if sid != "" {
			writeJSONRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "initialize must not carry Mcp-Session-Id")
			return
		}
		layout := srv.opts.Layout
		if h := r.Header.Get(HeaderLayout); h != "" {
			if layout, err = ParseLayout(h); err != nil {
				writeJSONRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, err.Error())
				return
			}
		}
		sess = newSession(TransportHTTP, srv.opts.SessionIDBytes, layout)
		srv.sessions.add(sess)
		w.Header().Set(headerSessionID, sess.id)
		note(r, slog.String("session", sess.id))
	case sid == "":
		writeJSONRPCError(w, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "missing Mcp-Session-Id: send initialize first")
		return
	default:
		if sess = srv.sessions.get(sid); sess == nil {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
	}

	if !isReq || !req.IsCall() {
		if isReq {
			srv.handle(sess, nil, req)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}

	accept := r.Header.Get("Accept")
	wantSSE := accepts(accept, "text/event-stream")
	wantJSON := accepts(accept, "application/json")
	switch {
	case wantSSE && !(srv.opts.PreferJSON && wantJSON):
		srv.answerSSE(w, r, sess, req)
	case wantJSON:
		resp := srv.handle(sess, nil, req)
		data, err := jsonrpc.EncodeMessage(resp)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(data)
	default:
		http.Error(w, "Accept must allow application/json or text/event-stream", http.StatusNotAcceptable)
	}
}

// answerSSE answers a request on its own SSE stream: a priming event, the
// request's progress, then the response; the stream ends after the response
// unless held. In the Python layouts the priming event goes only to
// protocol 2025-11-25 or later, and a tools/call stream is closed right
// after it (SEP-1699 polling, as a tool calling the SDK's close_sse_stream
// at once does): the call runs on, its events are logged under the
// request's stream, and the client fetches them with GET and Last-Event-ID.
func (srv *Server) answerSSE(w http.ResponseWriter, r *http.Request, sess *Session, req *jsonrpc.Request) {
	st := newStream(streamPost, TransportHTTP, sess.layout, fmt.Sprint(req.ID.Raw()))
	if !sess.attach(st) {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	defer sess.detach(st)
	hold := srv.opts.HoldPostStreams || r.Header.Get(HeaderHold) == "1"
	prime, poll := !srv.opts.NoPriming, false
	if sess.layout.Python() {
		var initVersion string
		if req.Method == "initialize" {
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = unmarshalParams(req.Params, &p)
			initVersion = cmp.Or(p.ProtocolVersion, pythonDefaultVersion)
		}
		prime = prime && pythonPrimes(pythonVersion(r, initVersion))
		poll = prime && req.Method == "tools/call"
	}
	sseHeaders(w)
	if prime {
		srv.emitPriming(sess, st)
	}
	run := func() {
		// The request runs under the server's context, not the client's: a
		// cut stream does not stop the tool, and its result is still "sent"
		// (logged).
		resp := srv.handle(sess, st, req)
		if _, err := srv.emit(sess, st, resp, true); err != nil {
			srv.log.Error("emitting response", "session", sess.id, "err", err)
		}
	}
	if poll {
		ev := <-st.events // the priming event, queued by emitPriming
		err := srv.writeBurst(w, st.layout, []Event{ev})
		sess.detach(st) // closed before the tool runs: its events are only logged
		go run()
		note(r, slog.Int("events", 1), slog.Bool("polling", true), slog.Bool("written", err == nil))
		return
	}
	go run()
	n := srv.pump(r.Context(), w, st, hold)
	note(r, slog.Int("events", n), slog.Bool("hold", hold))
}

// getMCP opens the session's standalone stream. With Last-Event-ID it is a
// resume: the session's events after the cursor (from it, when inclusive) are
// replayed first — every event the session was ever sent, on either
// transport, which is the seed's shared-namespace bug.
func (srv *Server) getMCP(w http.ResponseWriter, r *http.Request) {
	if !accepts(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "Accept must allow text/event-stream", http.StatusNotAcceptable)
		return
	}
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		http.Error(w, "missing Mcp-Session-Id", http.StatusBadRequest)
		return
	}
	sess := srv.sessions.get(sid)
	if sess == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	c := r.Header.Get(headerLastEventID)
	if c != "" && sess.layout.Python() {
		srv.getMCPPython(w, r, sess, c)
		return
	}
	st := newStream(streamStandalone, TransportHTTP, sess.layout, pythonGetStreamKey)
	var replay []Event
	if c != "" {
		cursor, err := ParseEventID(c)
		if err != nil {
			http.Error(w, "malformed Last-Event-ID: "+err.Error(), http.StatusBadRequest)
			return
		}
		replay, err = sess.resume(cursor.String(), srv.opts.Replay, st)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		srv.resumes.Add(1)
		ids := make([]string, len(replay))
		for i, ev := range replay {
			ids[i] = ev.ID.String()
		}
		note(r, slog.String("replay", srv.opts.Replay.String()), slog.Any("replayed", ids))
	} else if !sess.attach(st) {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	defer sess.detach(st)

	sseHeaders(w)
	if err := srv.writeBurst(w, sess.layout, replay); err != nil {
		return
	}
	n := srv.pump(r.Context(), w, st, true)
	note(r, slog.Int("events", len(replay)+n))
}

// getMCPPython answers a GET with Last-Event-ID in the Python layouts
// ([Server.resumePython]): the replay and the fresh priming event as one
// burst, then the end of the stream, or, without a priming event, the
// replayed stream's later events until the client goes away.
func (srv *Server) getMCPPython(w http.ResponseWriter, r *http.Request, sess *Session, cursor string) {
	st := newStream(streamReplay, TransportHTTP, sess.layout, "")
	rp := srv.resumePython(sess, cursor, pythonVersion(r, ""), srv.opts.Replay, st)
	if rp.open {
		defer sess.detach(st)
	}
	if rp.found {
		srv.resumes.Add(1)
	}
	ids := make([]string, len(rp.events))
	for i, ev := range rp.events {
		ids[i] = ev.WireID()
	}
	note(r, slog.String("layout", sess.layout.String()), slog.Bool("cursor_found", rp.found), slog.Any("replayed", ids))
	sseHeaders(w)
	if err := srv.writeBurst(w, st.layout, rp.events); err != nil || !rp.open {
		return
	}
	n := srv.pump(r.Context(), w, st, true)
	note(r, slog.Int("events", len(rp.events)+n))
}

// deleteMCP ends a session and its streams.
func (srv *Server) deleteMCP(w http.ResponseWriter, r *http.Request) {
	sid := r.Header.Get(headerSessionID)
	if sid == "" {
		http.Error(w, "missing Mcp-Session-Id", http.StatusBadRequest)
		return
	}
	sess := srv.sessions.remove(sid)
	if sess == nil {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	sess.close()
	w.WriteHeader(http.StatusNoContent)
}

// resume attaches st and returns the events to replay for cursor under mode.
// Snapshot and attach happen under one lock, so every later event reaches st
// after the replay, in order. Priming events are valid cursors but are not
// replayed.
func (s *Session) resume(cursor string, mode ReplayMode, st *stream) ([]Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := slices.IndexFunc(s.log, func(ev Event) bool { return ev.WireID() == cursor })
	if at < 0 {
		return nil, fmt.Errorf("%w %s: not an event of session %s", errUnknownCursor, cursor, s.id)
	}
	from := at + 1
	if mode == ReplayInclusive {
		from = at
	}
	var out []Event
	for _, ev := range s.log[from:] {
		if ev.Kind != KindPriming {
			out = append(out, ev)
		}
	}
	if !s.attachLocked(st) {
		return nil, fmt.Errorf("session %s was closed", s.id)
	}
	return out, nil
}
