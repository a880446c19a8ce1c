// Package whatwgsse is a test oracle: a whole-input parser of
// text/event-stream written straight from the WHATWG HTML standard's "event
// stream interpretation" (html.spec.whatwg.org/multipage/server-sent-events.html),
// as an EventSource applies it. It is deliberately simple and slow (strings,
// one pass over the whole input) so that a reader can check it against the
// standard line by line; the rewriter's tests (sse/) and the client-reader
// differential test (internal/clientoracle) compare against it.
//
// The rules it follows: one leading U+FEFF is skipped; lines end at CRLF, LF
// or CR; an unterminated last line and an unterminated last event are
// discarded; a line starting with ':' is a comment; a line without ':' is a
// field with an empty value; one space after the colon is removed; "data"
// appends its value and LF to the data buffer, "event" sets the type,
// "id" without NUL sets the last event ID buffer, "retry" of ASCII digits only
// sets the reconnection time, anything else is ignored; an empty line
// dispatches: the last event ID string takes the buffer's value, and a
// message event fires only when the data buffer is not empty.
package whatwgsse

import (
	"strconv"
	"strings"
)

// Field is one field line as the parser processed it (comments excluded).
type Field struct {
	Name, Value string
}

// Dispatch is what one empty line does.
type Dispatch struct {
	// LastEventID is the EventSource's last event ID string after the
	// dispatch (it persists across events; an empty id field clears it).
	LastEventID string
	// ID is the event's own last valid id field, HasID whether it is
	// non-empty.
	ID    string
	HasID bool
	// Type is the event type buffer ("" means "message").
	Type string
	// Data is the data buffer without its final LF; HasData says the buffer
	// was not empty, so a MessageEvent fires.
	Data    string
	HasData bool
	// Fields are the field lines of this event, in order.
	Fields []Field
}

// Retry is a retry field that set the reconnection time.
type Retry struct {
	// After is the number of dispatches before the field.
	After int
	// Millis is the new reconnection time.
	Millis int64
}

// Stream is a whole parsed input.
type Stream struct {
	// Dispatches holds one entry per empty line, in order.
	Dispatches []Dispatch
	// Retries holds the valid retry fields of complete lines, in order
	// (also those of an unterminated last event: a retry field takes effect
	// when its line is parsed).
	Retries []Retry
	// LastEventID is the last event ID string at the end of the input: what
	// the EventSource sends as Last-Event-ID when it reconnects.
	LastEventID string
}

// Messages returns the dispatches that fire a MessageEvent.
func (s Stream) Messages() []Dispatch {
	var out []Dispatch
	for _, d := range s.Dispatches {
		if d.HasData {
			out = append(out, d)
		}
	}
	return out
}

// Parse parses a whole stream the way an EventSource does.
func Parse(in []byte) Stream {
	s := strings.TrimPrefix(string(in), "\ufeff")
	var (
		out          Stream
		cur          Dispatch
		idBuf        string
		data         strings.Builder
		dataNonEmpty bool
	)
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			break // an unterminated last line is discarded
		}
		line := s[:i]
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			s = s[i+2:]
		} else {
			s = s[i+1:]
		}
		if line == "" {
			cur.LastEventID = idBuf
			cur.HasData = dataNonEmpty
			cur.Data = strings.TrimSuffix(data.String(), "\n")
			out.Dispatches = append(out.Dispatches, cur)
			out.LastEventID = idBuf
			cur, dataNonEmpty = Dispatch{}, false
			data.Reset()
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value := line, ""
		if c := strings.IndexByte(line, ':'); c >= 0 {
			name, value = line[:c], strings.TrimPrefix(line[c+1:], " ")
		}
		cur.Fields = append(cur.Fields, Field{Name: name, Value: value})
		switch name {
		case "event":
			cur.Type = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			dataNonEmpty = true
		case "id":
			if !strings.Contains(value, "\x00") {
				idBuf, cur.ID, cur.HasID = value, value, value != ""
			}
		case "retry":
			if value != "" && strings.Trim(value, "0123456789") == "" {
				if ms, err := strconv.ParseInt(value, 10, 64); err == nil {
					out.Retries = append(out.Retries, Retry{After: len(out.Dispatches), Millis: ms})
				}
			}
		}
	}
	return out
}

// LoneCR returns the offset of the first '\r' of in that a byte other than
// '\n' follows, or -1: the first line end only WHATWG readers see (the Go
// SDK's reader ends lines at '\n' only). A '\r' that ends in is not one:
// a '\n' may follow in more bytes.
func LoneCR(in []byte) int {
	for i := 0; i+1 < len(in); i++ {
		if in[i] == '\r' && in[i+1] != '\n' {
			return i
		}
	}
	return -1
}
