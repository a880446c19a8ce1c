package dualstack

import (
	"bytes"
	"context"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Header names.
const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"
	// HeaderHold asks that a POST /mcp SSE response stay open after its
	// result was written (value "1").
	HeaderHold = "X-Dualstack-Hold"
)

// maxBody bounds a POSTed JSON-RPC message.
const maxBody = 4 << 20

// mediaType returns the lower-case media type of a Content-Type value.
func mediaType(v string) string {
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return mt
}

// accepts reports whether an Accept header admits mt. An absent header admits
// everything.
func accepts(accept, mt string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for part := range strings.SplitSeq(accept, ",") {
		switch mediaType(strings.TrimSpace(part)) {
		case mt, "*/*":
			return true
		}
	}
	return false
}

// writeJSONRPCError answers status with a JSON-RPC error response body, for
// the request id (invalid ID renders as null).
func writeJSONRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int64, message string) {
	body, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}})
	if err != nil {
		http.Error(w, message, status)
		return
	}
	if prefix := []byte(`{"jsonrpc":"2.0",`); !id.IsValid() && bytes.HasPrefix(body, prefix) {
		// EncodeMessage omits a missing id; JSON-RPC wants "id": null.
		body = append([]byte(`{"jsonrpc":"2.0","id":null,`), body[len(prefix):]...)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// requestLog collects what a handler wants said in its request's log line.
type requestLog struct {
	attrs []slog.Attr
}

type requestLogKey struct{}

// note adds attributes to the request's log line.
func note(r *http.Request, attrs ...slog.Attr) {
	if rl, ok := r.Context().Value(requestLogKey{}).(*requestLog); ok {
		rl.attrs = append(rl.attrs, attrs...)
	}
}

// statusWriter records the status and size of a response. Unwrap lets
// http.ResponseController reach the underlying writer's Flush.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (sw *statusWriter) WriteHeader(code int) {
	if sw.status == 0 {
		sw.status = code
	}
	sw.ResponseWriter.WriteHeader(code)
}

func (sw *statusWriter) Write(p []byte) (int, error) {
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	n, err := sw.ResponseWriter.Write(p)
	sw.bytes += int64(n)
	return n, err
}

func (sw *statusWriter) Unwrap() http.ResponseWriter { return sw.ResponseWriter }

// logged wraps h so every request produces one log line when it completes.
func (srv *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rl := &requestLog{}
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestLogKey{}, rl)))
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", sw.status),
			slog.Int64("bytes", sw.bytes),
			slog.Duration("duration", time.Since(start)),
		}
		if sid := r.Header.Get(headerSessionID); sid != "" {
			attrs = append(attrs, slog.String("mcp_session_id", sid))
		}
		if c := r.Header.Get(headerLastEventID); c != "" {
			attrs = append(attrs, slog.String("last_event_id", c))
		}
		attrs = append(attrs, rl.attrs...)
		srv.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	})
}
