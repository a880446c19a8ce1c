package seedclient

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
)

// Event is one server-sent event as a client sees it.
type Event struct {
	// Name is the "event" field ("" means "message").
	Name string
	// ID is the "id" field of this event, "" when it had none.
	ID string
	// Data is the "data" field (lines joined with "\n").
	Data []byte
}

// maxLine bounds one SSE line.
const maxLine = 1 << 20

// eventReader parses a text/event-stream body (WHATWG "event stream
// interpretation", LF and CRLF line ends; bare CR is not supported).
type eventReader struct {
	r *bufio.Reader
}

func newEventReader(r io.Reader) *eventReader {
	return &eventReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next dispatched event, skipping comment-only and empty
// blocks, or the read error (io.EOF at a clean end).
func (er *eventReader) next() (Event, error) {
	var (
		ev      Event
		data    bytes.Buffer
		hasData bool
		seen    bool
	)
	for {
		line, err := er.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) || len(line) > maxLine {
			return Event{}, errors.New("SSE line too long")
		}
		if err != nil && len(line) == 0 {
			return Event{}, err
		}
		text := strings.TrimSuffix(strings.TrimSuffix(string(line), "\n"), "\r")
		if text == "" {
			if seen {
				if hasData {
					ev.Data = bytes.TrimSuffix(data.Bytes(), []byte("\n"))
				}
				return ev, nil
			}
			if err != nil {
				return Event{}, err
			}
			continue
		}
		if strings.HasPrefix(text, ":") {
			continue
		}
		field, value, _ := strings.Cut(text, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Name, seen = value, true
		case "id":
			ev.ID, seen = value, true
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			hasData, seen = true, true
		case "retry":
			seen = true
		}
		if err != nil {
			return Event{}, err
		}
	}
}
