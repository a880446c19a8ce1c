package main

import (
	"strings"
	"testing"
)

// FuzzIsEventStream checks isEventStream, which OnHttpResponseHeaders calls
// before its recovery is armed, against the rule it implements (the media
// type before any ';', trimmed, equal to text/event-stream in any case): the
// first-letter shortcut changes no answer, and nothing panics.
func FuzzIsEventStream(f *testing.F) {
	for _, ct := range []string{"", "text/event-stream", "Text/Event-Stream; charset=utf-8", " text/event-stream",
		"\u00a0text/event-stream", "application/json", "application/json; charset=utf-8", "text/plain", "t", ";", "\x00"} {
		f.Add(ct)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		mt, _, _ := strings.Cut(ct, ";")
		want := strings.EqualFold(strings.TrimSpace(mt), "text/event-stream")
		if got := isEventStream(ct); got != want {
			t.Fatalf("isEventStream(%q) = %v, want %v", ct, got, want)
		}
	})
}
