package dualstack

import (
	"bytes"
	"context"
	"net/http"
)

// sseHeaders starts an SSE response and flushes it, so a client's Do returns
// before the first event.
func sseHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
}

// encodeEvent renders one SSE event. Messages are "event: message", an "id"
// line when the event has one, and the data on one line (encoded JSON has no
// newline). A priming event is an ID and an empty data line.
func encodeEvent(name, id string, data []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(data) + 48)
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	if id != "" {
		b.WriteString("id: ")
		b.WriteString(id)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	return b.Bytes()
}

// pump writes st's events to w until the client goes away, the server or
// session ends the stream, or (for a POST stream that is not held) the
// request's response was written. It returns the number of events written.
func (srv *Server) pump(ctx context.Context, w http.ResponseWriter, st *stream, hold bool) int {
	n := 0
	for {
		select {
		case <-ctx.Done():
			return n
		case <-st.kill:
			return n
		case <-srv.ctx.Done():
			return n
		case ev := <-st.events:
			burst := []Event{ev}
			// What is queued already goes out with it: in one chunk in
			// LayoutPythonOneChunk, else one flush per event. A POST
			// stream that is not held ends after its response.
			for !(ev.final && st.kind == streamPost && !hold) && len(st.events) > 0 {
				ev = <-st.events
				burst = append(burst, ev)
			}
			if err := srv.writeBurst(w, st.layout, burst); err != nil {
				return n
			}
			n += len(burst)
			if ev.final && st.kind == streamPost && !hold {
				return n
			}
		}
	}
}
