package clientoracle

import (
	"strings"
	"testing"
	"time"
)

// TestCompareSeesChanges: each comparison reports a change of every aspect
// it checks, and nothing for a faithful rewrite (resolved by a stand-in
// resume that strips "http:" and refuses an untagged ID).
func TestCompareSeesChanges(t *testing.T) {
	x := ids{resolve: func(id string) string {
		if v, ok := strings.CutPrefix(id, "http:"); ok {
			return v
		}
		return "(refused)"
	}}
	up := "event: message\nid: a\ndata: x\n\n"
	for _, c := range []struct {
		gd, want string
	}{
		{"event: message\ndata: x\nid: http:a\n\n", ""},
		{"event: message\nid: http:b\ndata: x\n\n", "id,reconnect-id"},
		{"event: message\nid: a\ndata: x\n\n", "id,reconnect-id"},
		{"event: other\nid: http:a\ndata: x\n\n", "event"},
		{"event: message\nid: http:a\ndata: y\n\n", "event"},
		{"event: message\nid: http:a\nretry: 5\ndata: x\n\n", "retry"},
		{"event: message\nid: http:a\ndata: x\n\ndata: z\n\n", "events"},
	} {
		if got := aspects(compareWHATWG([]byte(up), []byte(c.gd), x)); got != c.want {
			t.Errorf("WHATWG on %q: aspects %q, want %q", c.gd, got, c.want)
		}
	}
	a, b := "a", "http:a"
	msg := "message"
	tsUp := tsView{Events: []tsEvent{{ID: &a, Event: &msg, Data: "x"}}, Retries: []float64{5}}
	for _, c := range []struct {
		gd   tsView
		want string
	}{
		{tsView{Events: []tsEvent{{ID: &b, Event: &msg, Data: "x"}}, Retries: []float64{5}}, ""},
		{tsView{Events: []tsEvent{{Event: &msg, Data: "x"}}, Retries: []float64{5}}, "id"},
		{tsView{Events: []tsEvent{{ID: &b, Data: "x"}}, Retries: []float64{5}}, "event"},
		{tsView{Events: []tsEvent{{ID: &b, Event: &msg, Data: "x"}}}, "retry"},
		{tsView{Retries: []float64{5}}, "events"},
	} {
		if got := aspects(compareTS(tsUp, c.gd, x)); got != c.want {
			t.Errorf("eventsource-parser on %+v: aspects %q, want %q", c.gd, got, c.want)
		}
	}
	goUp := goView{Messages: []string{"m"}, End: "reconnected", LastEventID: "a", Delay: 50 * time.Millisecond}
	for _, c := range []struct {
		gd   goView
		want string
	}{
		{goView{Messages: []string{"m"}, End: "reconnected", LastEventID: "http:a", Delay: 50 * time.Millisecond}, ""},
		{goView{Messages: []string{"n"}, End: "reconnected", LastEventID: "http:a", Delay: 50 * time.Millisecond}, "event"},
		{goView{Messages: []string{"m"}, End: "error: x", LastEventID: "http:a", Delay: 50 * time.Millisecond}, "end"},
		{goView{Messages: []string{"m"}, End: "reconnected", LastEventID: "a", Delay: 50 * time.Millisecond}, "reconnect-id"},
		{goView{Messages: []string{"m"}, End: "reconnected", LastEventID: "http:a", Delay: 1500 * time.Millisecond}, "retry"},
	} {
		if got := aspects(compareGo(goUp, c.gd, x)); got != c.want {
			t.Errorf("go-sdk on %+v: aspects %q, want %q", c.gd, got, c.want)
		}
	}
}

// aspects is the first aspect of each difference, comma-joined.
func aspects(diffs []string) string {
	var out []string
	for _, d := range diffs {
		a, _, _ := strings.Cut(d, ":")
		out = append(out, a)
	}
	return strings.Join(out, ",")
}
