package dualstack

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
)

// EventID is an SSE event ID minted by the server's single allocator.
// Its wire form is "e-" followed by the decimal counter value, e.g. "e-104".
// The zero value means "no ID".
type EventID int64

// eventIDPrefix starts every event ID on the wire.
const eventIDPrefix = "e-"

// String returns the wire form, e.g. "e-104", or "" for the zero value.
func (id EventID) String() string {
	if id == 0 {
		return ""
	}
	return eventIDPrefix + strconv.FormatInt(int64(id), 10)
}

// MarshalText encodes the wire form ("" for the zero value).
func (id EventID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalText decodes the wire form; "" decodes to the zero value.
func (id *EventID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = 0
		return nil
	}
	v, err := ParseEventID(string(b))
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// ParseEventID parses the wire form "e-<n>" with n ≥ 1. Anything else, a
// transport-tagged ID such as "sse:e-104" included, is an error.
func ParseEventID(s string) (EventID, error) {
	digits, ok := strings.CutPrefix(s, eventIDPrefix)
	if !ok || digits == "" || digits[0] == '+' || digits[0] == '-' {
		return 0, fmt.Errorf("event ID %q is not of the form e-<n>", s)
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("event ID %q is not of the form e-<n> with n ≥ 1", s)
	}
	return EventID(n), nil
}

// allocator mints event IDs from one monotonic counter shared by both
// listeners: the seed's first condition.
type allocator struct {
	last atomic.Int64
}

// newAllocator returns an allocator whose first ID is first (1 if first < 1).
func newAllocator(first int) *allocator {
	if first < 1 {
		first = 1
	}
	a := &allocator{}
	a.last.Store(int64(first) - 1)
	return a
}

// next returns the next ID.
func (a *allocator) next() EventID { return EventID(a.last.Add(1)) }

// peek returns the ID the next call to next will return.
func (a *allocator) peek() EventID { return EventID(a.last.Load() + 1) }
