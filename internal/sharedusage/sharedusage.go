// Package sharedusage measures what the guard keeps in a host's shared data,
// for the reliability tests and the bench's per-session figure.
package sharedusage

import (
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// Usage is the guard's part of a host's shared data.
type Usage struct {
	Keys  int   // keys with the guard's prefix
	Bytes int64 // their keys' and values' bytes
	Live  int   // slots holding a live (decodable, named) session record
}

// Measure reads the guard's part of h's shared data.
func Measure(h *wasmhost.Host) Usage {
	var u Usage
	for k, v := range h.SharedData() {
		if !strings.HasPrefix(k, cursor.KeyPrefix) {
			continue
		}
		u.Keys++
		u.Bytes += int64(len(k) + len(v))
		if rec, ok, err := cursor.Decode(v); err == nil && ok && rec.Session != (cursor.SessionKey{}) {
			u.Live++
		}
	}
	return u
}
