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

// TestCompareKindsSeesMisreadKinds: a batch whose result is not its first
// element must be rewound elsewhere, a notification must not.
func TestCompareKindsSeesMisreadKinds(t *testing.T) {
	up := "id: p\ndata:\n\n" +
		"id: b\ndata: [{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}},{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}]\n\n" +
		"id: n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	gd := strings.NewReplacer("id: p", "id: http:p", "id: b", "id: http:~1r1.0.bp", "id: n", "id: http:n").Replace(up)
	c := &Case{Transport: "http", Mint: true}
	for _, w := range []struct {
		name      string
		elsewhere func(k int, id string) string
		want      string
	}{
		{"faithful", func(_ int, id string) string {
			if id == "http:~1r1.0.bp" {
				return "p"
			}
			return strings.TrimPrefix(id, "http:")
		}, ""},
		{"batch judged by its first element", func(_ int, id string) string {
			if id == "http:~1r1.0.bp" {
				return "b"
			}
			return strings.TrimPrefix(id, "http:")
		}, "kind"},
		{"notification rewound", func(_ int, id string) string { return "p" }, "kind"},
	} {
		diffs, checked, results := compareKinds(c, []byte(up), []byte(gd), w.elsewhere)
		if got := aspects(diffs); got != w.want || checked != 2 || results != 1 {
			t.Errorf("%s: aspects %q (want %q), %d checked (want 2), %d results (want 1)", w.name, got, w.want, checked, results)
		}
	}
}
