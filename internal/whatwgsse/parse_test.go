package whatwgsse

import (
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     Stream
	}{
		{"LF, id persists across events", "id: a\ndata: 1\n\ndata: 2\n\n", Stream{
			Dispatches: []Dispatch{
				{LastEventID: "a", ID: "a", HasID: true, Data: "1", HasData: true, Fields: []Field{{"id", "a"}, {"data", "1"}}},
				{LastEventID: "a", Data: "2", HasData: true, Fields: []Field{{"data", "2"}}},
			},
			LastEventID: "a",
		}},
		{"CR only, BOM, one space removed, multi-line data", "\ufeffdata:  x\rdata:y\r\r", Stream{
			Dispatches: []Dispatch{{Data: " x\ny", HasData: true, Fields: []Field{{"data", " x"}, {"data", "y"}}}},
		}},
		{"CRLF, empty id clears, retry digits only", "id: a\r\n\r\nid:\r\nretry: 15\r\nretry: 1.5\r\nevent: x\r\n\r\n", Stream{
			Dispatches: []Dispatch{
				{LastEventID: "a", ID: "a", HasID: true, Fields: []Field{{"id", "a"}}},
				{Type: "x", Fields: []Field{{"id", ""}, {"retry", "15"}, {"retry", "1.5"}, {"event", "x"}}},
			},
			Retries: []Retry{{After: 1, Millis: 15}},
		}},
		{"NUL id ignored, no colon is a field, comment", ": hi\nid: a\x00b\ndata\n\n", Stream{
			Dispatches: []Dispatch{{HasData: true, Fields: []Field{{"id", "a\x00b"}, {"data", ""}}}},
		}},
		{"unterminated event and line discarded, its retry kept", "id: a\ndata: 1\nretry: 7\ndata: 2", Stream{
			Retries: []Retry{{After: 0, Millis: 7}},
		}},
	} {
		if got := Parse([]byte(c.in)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: Parse(%q)\n got %+v\nwant %+v", c.name, c.in, got, c.want)
		}
	}
}

func TestMessages(t *testing.T) {
	s := Parse([]byte("id: p\ndata:\n\nid: q\n\ndata: m\n\n"))
	got := s.Messages()
	if len(got) != 2 || got[0].LastEventID != "p" || got[1].Data != "m" || got[1].LastEventID != "q" {
		t.Errorf("Messages = %+v, want the empty-data priming event and m", got)
	}
}

// TestLoneCR: the first CR that no LF follows, a CR at the end excepted.
func TestLoneCR(t *testing.T) {
	for in, want := range map[string]int{"": -1, "a\r\nb\n": -1, "a\r": -1, "a\r\nb\rc": 4, "\r\r\n": 0, "x\r\r": 1} {
		if got := LoneCR([]byte(in)); got != want {
			t.Errorf("LoneCR(%q) = %d, want %d", in, got, want)
		}
	}
}
