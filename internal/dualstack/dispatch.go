package dualstack

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// supportedVersions are the protocol versions initialize accepts, newest
// first. 2026-07-28 is absent: it has no sessions and no resumption.
var supportedVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// serverInfo names this server in the initialize result.
var serverInfo = &mcp.Implementation{Name: "mcp-dualstack", Title: "Dual-transport reference upstream (seed bug on purpose)", Version: "0.1.0"}

// handle runs one client message in sess. Events the request emits while it
// runs (progress) go to target, or to the session's default stream when
// target is nil. It returns the response for a call and nil for a
// notification or a client's response.
func (srv *Server) handle(sess *Session, target *stream, req *jsonrpc.Request) *jsonrpc.Response {
	if !req.IsCall() {
		return nil // notifications/initialized, notifications/cancelled, ...: nothing to do
	}
	result, err := srv.call(sess, target, req)
	if err != nil {
		return &jsonrpc.Response{ID: req.ID, Error: err}
	}
	raw, merr := json.Marshal(result)
	if merr != nil {
		return &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "encoding result: " + merr.Error()}}
	}
	return &jsonrpc.Response{ID: req.ID, Result: raw}
}

// call answers one request by method.
func (srv *Server) call(sess *Session, target *stream, req *jsonrpc.Request) (any, error) {
	switch req.Method {
	case "initialize":
		var p mcp.InitializeParams
		if err := unmarshalParams(req.Params, &p); err != nil {
			return nil, err
		}
		version := p.ProtocolVersion
		if !slices.Contains(supportedVersions, version) {
			version = supportedVersions[0]
		}
		sess.mu.Lock()
		sess.protocolVersion = version
		sess.mu.Unlock()
		return &mcp.InitializeResult{
			ProtocolVersion: version,
			Capabilities:    &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
			ServerInfo:      serverInfo,
			Instructions:    "Reference upstream for mcp-resume-guard: shared event IDs, bridged sessions, replay strictly after the cursor.",
		}, nil
	case "ping":
		return struct{}{}, nil
	case "tools/list":
		res := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
		for _, t := range srv.tools {
			res.Tools = append(res.Tools, t.def)
		}
		return res, nil
	case "tools/call":
		var p mcp.CallToolParamsRaw
		if err := unmarshalParams(req.Params, &p); err != nil {
			return nil, err
		}
		t := srv.tool(p.Name)
		if t == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", p.Name)}
		}
		tc := &toolCall{srv: srv, sess: sess, target: target, token: p.GetProgressToken()}
		return t.run(tc, p.Arguments)
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", req.Method)}
}

// unmarshalParams decodes params, answering invalid params on failure.
func unmarshalParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
	}
	return nil
}

// emit logs msg as the next event of sess and sends it to target (or the
// default stream when target is nil). final marks the response that completes
// a POST stream.
func (srv *Server) emit(sess *Session, target *stream, msg jsonrpc.Message, final bool) (Event, error) {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return Event{}, fmt.Errorf("encoding event for session %s: %w", sess.id, err)
	}
	kind := KindNotification
	if _, ok := msg.(*jsonrpc.Response); ok {
		kind = KindResponse
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.appendLocked(Event{ID: srv.ids.next(), Kind: kind, Data: data, final: final}, target), nil
}

// emitPriming logs and sends a priming event (an ID, empty data) to target.
func (srv *Server) emitPriming(sess *Session, target *stream) Event {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.appendLocked(Event{ID: srv.ids.next(), Kind: KindPriming}, target)
}

// EmitProgress sends a notifications/progress for token to the session's
// default stream (the legacy stream while open, else the standalone GET /mcp
// stream); with no open stream the event is only logged, available to a
// resume. It is the seed's e-105: progress for a request other than the one
// the client waits for.
func (srv *Server) EmitProgress(sessionID string, token any, progress, total float64, message string) (EventID, error) {
	return srv.Notify(sessionID, "notifications/progress", &mcp.ProgressNotificationParams{
		ProgressToken: token, Progress: progress, Total: total, Message: message,
	})
}

// Notify sends a notification with the given method and params to the
// session's default stream, as [Server.EmitProgress] does.
func (srv *Server) Notify(sessionID, method string, params any) (EventID, error) {
	sess := srv.sessions.get(sessionID)
	if sess == nil {
		return 0, fmt.Errorf("notify %s: unknown session %q", method, sessionID)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return 0, fmt.Errorf("notify %s: encoding params: %w", method, err)
	}
	ev, err := srv.emit(sess, nil, &jsonrpc.Request{Method: method, Params: raw}, false)
	return ev.ID, err
}
