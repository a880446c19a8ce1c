package seedclient

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestEventReader(t *testing.T) {
	in := ": comment\n\n" +
		"event: endpoint\ndata: /messages?sessionId=s-1\n\n" +
		"id: e-1\ndata:\n\n" +
		"event: message\r\nid: sse:e-2\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" +
		"retry: 100\n\n" +
		"id: e-3\ndata: cut before the blank line\n"
	want := []Event{
		{Name: "endpoint", Data: []byte("/messages?sessionId=s-1")},
		{ID: "e-1", Data: []byte("")},
		{Name: "message", ID: "sse:e-2", Data: []byte("{\"a\":\n1}")},
		{},
	}
	// One byte at a time, as a slow network delivers it.
	er := newEventReader(iotest.OneByteReader(strings.NewReader(in)))
	for i, w := range want {
		got, err := er.next()
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if got.Name != w.Name || got.ID != w.ID || string(got.Data) != string(w.Data) {
			t.Errorf("event %d = %+v, want %+v", i, got, w)
		}
	}
	// The last event has no terminating blank line: it is never dispatched.
	if ev, err := er.next(); !errors.Is(err, io.EOF) {
		t.Errorf("after the last event: %+v, %v; want io.EOF", ev, err)
	}
}
