package wasmhost

import (
	"bytes"

	"github.com/tidwall/gjson"
)

// maxResultScan bounds the data of one event that resultScan keeps: a
// JSON-RPC result names its "result" key within its first bytes (the Go
// SDK writes jsonrpc, id, then result; the TypeScript SDK result first),
// and gjson finds a key in a truncated object.
const maxResultScan = 64 << 10

// resultScan finds, in the bytes a stream sends the client, the end of the
// first complete SSE event whose data is a JSON-RPC result: its data lines
// joined (the value after "data:" and one optional space, as WHATWG reads
// them) hold an object with a top-level "result" key and no "method"
// (gjson). Lines end at LF, CRLF or a lone CR; an event ends at an empty
// line.
type resultScan struct {
	line    []byte // the current line, up to maxResultScan bytes
	data    []byte // the current event's data, up to maxResultScan bytes
	hasData bool   // the current event has a data line
	cr      bool   // the last byte was a CR: a LF right after it ends no line
	// crEnd: a result event ended at a CR that ended the bytes scanned;
	// the next bytes decide whether a LF belongs to it.
	crEnd bool
	found bool
}

// scan reads the next bytes sent and returns how many of them to send
// before the cut: up to the end of the line that completes a result event
// (a CRLF whole), or -1 for all of them and no cut yet.
func (r *resultScan) scan(b []byte) int {
	if r.crEnd {
		r.crEnd, r.found = false, true
		if len(b) > 0 && b[0] == '\n' {
			return 1
		}
		return 0
	}
	if r.found {
		return -1
	}
	for i, c := range b {
		if c != '\r' && c != '\n' {
			r.cr = false
			if len(r.line) < maxResultScan {
				r.line = append(r.line, c)
			}
			continue
		}
		if c == '\n' && r.cr {
			r.cr = false
			continue
		}
		r.cr = c == '\r'
		if !r.endLine() {
			continue
		}
		switch {
		case c == '\n':
		case i+1 < len(b):
			if b[i+1] == '\n' {
				i++
			}
		default:
			r.crEnd = true
			return -1
		}
		r.found = true
		return i + 1
	}
	return -1
}

// endLine takes the line just ended; it reports whether the line ended a
// result event.
func (r *resultScan) endLine() bool {
	line := r.line
	r.line = r.line[:0]
	if len(line) == 0 {
		result := r.hasData && isResult(r.data)
		r.data, r.hasData = r.data[:0], false
		return result
	}
	v, ok := bytes.CutPrefix(line, []byte("data"))
	if !ok || (len(v) > 0 && v[0] != ':') {
		return false
	}
	if len(v) > 0 {
		v = bytes.TrimPrefix(v[1:], []byte(" "))
	}
	if r.hasData {
		r.data = appendCapped(r.data, []byte{'\n'})
	}
	r.hasData = true
	r.data = appendCapped(r.data, v)
	return false
}

func appendCapped(dst, b []byte) []byte {
	return append(dst, b[:min(len(b), max(0, maxResultScan-len(dst)))]...)
}

// isResult reports whether an event's data is a JSON-RPC result.
func isResult(data []byte) bool {
	m := gjson.ParseBytes(data)
	return m.IsObject() && m.Get("result").Exists() && !m.Get("method").Exists()
}
