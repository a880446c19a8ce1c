package sse

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
)

// mcpStream returns n events of typical MCP traffic: 90% progress
// notifications of about 200 bytes, 10% tool-call results of about 2 KB,
// each with "event: message" and "id: e-N".
func mcpStream(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	var b []byte
	for i := range n {
		b = append(b, "event: message\nid: e-"...)
		b = strconv.AppendInt(b, int64(100+i), 10)
		b = append(b, "\ndata: "...)
		if rng.IntN(10) == 0 {
			b = append(b, `{"jsonrpc":"2.0","id":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"result":{"content":[{"type":"text","text":"`...)
			b = append(b, strings.Repeat("lorem ipsum ", 160+rng.IntN(10))...)
			b = append(b, `"}],"isError":false}}`...)
		} else {
			b = append(b, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok-`...)
			b = strconv.AppendInt(b, int64(i%7), 10)
			b = append(b, `","progress":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"total":100000,"message":"step `...)
			b = append(b, strings.Repeat("x", 60+rng.IntN(20))...)
			b = append(b, `"}}`...)
		}
		b = append(b, "\n\n"...)
	}
	return b
}

func chunked(b []byte, size int) [][]byte {
	var chunks [][]byte
	for len(b) > 0 {
		n := min(size, len(b))
		chunks = append(chunks, b[:n])
		b = b[n:]
	}
	return chunks
}

func TestMCPStream(t *testing.T) {
	in := mcpStream(300)
	for _, size := range []int{16 << 10, 4096, 1000, 333, 17} {
		checkStream(t, cursor.TransportHTTP, 0, chunked(in, size))
	}
	_, evs, tagged, _ := run(t, cursor.TransportHTTP, 0, [][]byte{in})
	if len(evs) != 300 || tagged != 300 {
		t.Fatalf("%d events, %d tagged, want 300", len(evs), tagged)
	}
	var resp, notif int
	for _, e := range evs {
		switch e.Kind() {
		case cursor.KindResponse:
			resp++
			if !e.Truncated {
				t.Fatalf("a 2 KB response was not truncated: %s", dumpEvents([]Event{e}))
			}
		case cursor.KindNotification:
			notif++
		default:
			t.Fatalf("unexpected kind: %s", dumpEvents([]Event{e}))
		}
	}
	if resp == 0 || notif == 0 || resp+notif != 300 {
		t.Fatalf("%d responses, %d notifications", resp, notif)
	}
}

func TestRewriteDoesNotAllocate(t *testing.T) {
	chunks := chunked(mcpStream(2000), 16<<10)
	r := NewRewriter(cursor.TransportSSE, 0)
	dst := make([]byte, 0, 32<<10)
	pass := func() {
		r.Reset(cursor.TransportSSE, 0)
		for _, c := range chunks {
			dst, _ = r.Rewrite(dst[:0], c, false)
		}
	}
	pass() // let the per-call event arena reach its steady size
	if allocs := testing.AllocsPerRun(5, pass); allocs != 0 {
		t.Fatalf("Rewrite allocates %v times per pass over %d chunks", allocs, len(chunks))
	}
}

// TestLongDataDoesNotOverflow streams a 10 MiB data line: it must pass
// untouched, without overflowing and without buffering it.
func TestLongDataDoesNotOverflow(t *testing.T) {
	const size = 10 << 20
	line := bytes.Repeat([]byte("d"), size)
	var in []byte
	in = append(in, "id: big\ndata: "...)
	in = append(in, line...)
	in = append(in, "\n\nid: after\ndata: 1\n\n"...)
	want := bytes.Replace(bytes.Replace(in, []byte("id: big"), []byte("id: sse:big"), 1), []byte("id: after"), []byte("id: sse:after"), 1)

	r := NewRewriter(cursor.TransportSSE, 64)
	evs := make([]Event, 0, 4)
	out, grown := streamMeasured(r, chunked(in, 16<<10), func(int, []byte) {
		for _, e := range r.Events() {
			e.ID = bytes.Clone(e.ID)
			evs = append(evs, e)
		}
	})
	// Only the data prefix and the events' arena may have been allocated.
	if grown > 64<<10 {
		t.Fatalf("allocated %d bytes while streaming %d", grown, len(in))
	}
	if r.Overflowed() {
		t.Fatal("a long data line overflowed the stream")
	}
	if !bytes.Equal(out, want) {
		t.Fatal("a long data line did not pass untouched")
	}
	if c := cap(r.arena); c > 4096 {
		t.Fatalf("the arena grew to %d bytes", c)
	}
	if len(evs) != 2 || string(evs[0].ID) != "big" || !evs[0].Truncated || len(evs[0].Data) != DataPrefixBytes || string(evs[1].ID) != "after" {
		t.Fatalf("events %s", dumpEvents(evs))
	}
}

// streamMeasured feeds chunks to r, the last with eos, calling each after
// every call with its output, and returns the whole output and how many
// bytes were allocated meanwhile (beyond the output buffer).
func streamMeasured(r *Rewriter, chunks [][]byte, each func(i int, dst []byte)) (out []byte, allocated uint64) {
	n := 64
	for _, c := range chunks {
		n += len(c)
	}
	out = make([]byte, 0, n)
	dst := make([]byte, 0, 32<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i, c := range chunks {
		dst, _ = r.Rewrite(dst[:0], c, i == len(chunks)-1)
		out = append(out, dst...)
		each(i, dst)
	}
	runtime.ReadMemStats(&after)
	return out, after.TotalAlloc - before.TotalAlloc
}

func TestOverflow(t *testing.T) {
	const max = 8
	long := strings.Repeat("L", max+1)
	exact := strings.Repeat("E", max)
	for _, tc := range []struct {
		name       string
		in         string
		overflowed bool
	}{
		{"id value at the limit", "id: " + exact + "\nevent: " + exact + "\ndata: 1\n\nid: b\n\n", false},
		{"long id", "id: a\ndata: 1\n\nid: " + long + "\ndata: 2\n\nid: b\ndata: 3\n\n", true},
		{"long id without space", "id:a\n\nid:" + long + "\n\nid:b\n\n", true},
		{"long id in an event with an id", "id: a\ndata: 1\nid: " + long + "\n\nid: b\n\n", true},
		{"long id with nul", "id: a\n\nid: \x00" + long + "\n\nid: b\n\n", true},
		{"long unterminated id", "id: a\n\nid: " + long, true},
		{"long event type", "id: a\n\nevent: " + long + "\nid: b\ndata: 2\n\nid: c\n\n", true},
		{"long event type crlf", "id: a\r\n\r\nevent:" + long + "\r\nid: b\r\n\r\n", true},
		{"long other fields", "retry: " + long + "\n: " + long + "\nidx: " + long + "\nid: a\ndata: " + long + "\n\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, overflowed := run(t, cursor.TransportSSE, max, [][]byte{[]byte(tc.in)})
			if overflowed != tc.overflowed {
				t.Fatalf("Overflowed() = %v, want %v", overflowed, tc.overflowed)
			}
			checkAllSplits(t, cursor.TransportSSE, max, []byte(tc.in))
		})
	}
}

func TestOverflowPassesEverythingAfter(t *testing.T) {
	r := NewRewriter(cursor.TransportSSE, 4)
	out, _ := r.Rewrite(nil, []byte("id: a\n\nid: 12"), false)
	if string(out) != "id: sse:a\n\n" || r.Overflowed() {
		t.Fatalf("before the limit: %q overflowed=%v", out, r.Overflowed())
	}
	out, changed := r.Rewrite(nil, []byte("345\n\nid: b\n\n"), false)
	if string(out) != "id: 12345\n\nid: b\n\n" || !changed || !r.Overflowed() {
		t.Fatalf("at the limit: %q changed=%v overflowed=%v", out, changed, r.Overflowed())
	}
	next := []byte("id: c\ndata: " + respJSON + "\n\n")
	out, changed = r.Rewrite(nil, next, true)
	if !bytes.Equal(out, next) || changed || len(r.Events()) != 0 || r.Tagged() != 0 {
		t.Fatalf("after overflow: %q changed=%v events=%d", out, changed, len(r.Events()))
	}
}

// TestTinyEventsDoNotPinMemory feeds chunks made of thousands of tiny
// events: the per-call event storage may grow for such a chunk but is not
// kept past the bound.
func TestTinyEventsDoNotPinMemory(t *testing.T) {
	tiny := bytes.Repeat([]byte("id:x\n\n"), 5000)
	r := NewRewriter(cursor.TransportSSE, 0)
	out, _ := r.Rewrite(nil, tiny, false)
	if len(r.Events()) != 5000 || r.Tagged() != 5000 || len(out) != len(tiny)+5000*len(cursor.PrefixSSE) {
		t.Fatalf("%d events, %d tagged, %d bytes out", len(r.Events()), r.Tagged(), len(out))
	}
	r.Rewrite(nil, []byte("id: y\n\n"), false)
	if cap(r.events) > keepEvents || cap(r.arena) > keepArenaBytes {
		t.Fatalf("kept %d events and %d arena bytes after a small chunk", cap(r.events), cap(r.arena))
	}
	if len(r.Events()) != 1 || string(r.Events()[0].ID) != "y" {
		t.Fatalf("events %s", dumpEvents(r.Events()))
	}
}
