// Package logbuf is the log sink the tests share: a buffer that the code
// under test writes to from several goroutines while the test reads it.
package logbuf

import (
	"bytes"
	"strings"
	"sync"
	"time"
)

// Buffer is an io.Writer safe for concurrent use. The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns everything written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Lines returns the lines written so far that contain sub.
func (l *Buffer) Lines(sub string) []string {
	var out []string
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return out
}

// WaitFor reports whether what was written holds want within d: a line
// about a request may be written after its response reached the client.
func (l *Buffer) WaitFor(want string, d time.Duration) bool {
	return l.waitUntil(func() bool { return strings.Contains(l.String(), want) }, d)
}

// WaitForLines reports whether at least n lines hold sub within d (see
// WaitFor).
func (l *Buffer) WaitForLines(sub string, n int, d time.Duration) bool {
	return l.waitUntil(func() bool { return len(l.Lines(sub)) >= n }, d)
}

// waitUntil polls done every 10 ms until it holds or d has passed.
func (l *Buffer) waitUntil(done func() bool, d time.Duration) bool {
	for deadline := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		if done() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
