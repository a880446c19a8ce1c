package differential

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// kind is what an upstream event carries.
type kind int

const (
	priming kind = iota // an ID and empty data (MCP 2025-11-25)
	notification
	request // a server-to-client request (elicitation)
	result
	rpcError
	batchResult // a batch that holds a result
)

var kindNames = [...]string{"priming", "notification", "request", "result", "error", "batch"}

// holdsResult reports whether a client that holds the event's ID as its
// cursor but did not process the event loses a tool-call result.
func (k kind) holdsResult() bool { return k == result || k == batchResult }

// event is one upstream event.
type event struct {
	id   string
	kind kind
}

// layout is an official server SDK's way of writing events (MCP-FACTS.md,
// docs/how-it-decides.md).
type layout int

const (
	python layout = iota // id, event, data; CRLF; UUID IDs; replay, then a fresh priming event
	ts                   // event, id, data; <stream>_<ms>_<hex> IDs
	gosdk                // event, id, data; <26-char stream>_<n>; priming "event: prime" with retry
	csharp               // event, data, id (id after data)
	rust                 // data, id
	layouts
)

var layoutNames = [...]string{"python", "typescript", "go", "csharp", "rust"}

// ids mints one session's upstream event IDs in a layout's format, from one
// sequence shared by the session's streams (as the SDKs' event stores do).
type ids struct {
	l      layout
	rng    *rand.Rand
	stream string
	seq    int
}

func newIDs(l layout, rng *rand.Rand) *ids {
	g := &ids{l: l, rng: rng}
	switch l {
	case ts:
		g.stream = "_GET_stream"
	case gosdk:
		const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
		b := make([]byte, 26)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		g.stream = string(b)
	}
	return g
}

func (g *ids) next() string {
	g.seq++
	switch g.l {
	case python:
		return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", g.rng.Uint32(), g.rng.IntN(1<<16), g.rng.IntN(1<<12), g.rng.IntN(1<<12), g.rng.Uint64()&(1<<48-1))
	case ts:
		return fmt.Sprintf("%s_%d_%08x", g.stream, 1764600000000+int64(g.seq), g.rng.Uint32())
	case gosdk:
		return g.stream + "_" + strconv.Itoa(g.seq)
	case csharp:
		return fmt.Sprintf("%016x", g.rng.Uint64())
	}
	return fmt.Sprintf("%d/%d", g.seq, g.rng.IntN(9))
}

// data is the JSON-RPC message of an event of kind k.
func data(k kind, rpcID int) string {
	switch k {
	case notification:
		return `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":50,"total":100}}`
	case request:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"elicitation/create","params":{"message":"Which?","requestedSchema":{"type":"object"}}}`, 900+rpcID)
	case result:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"done café 🙂"}],"isError":false}}`, rpcID)
	case rpcError:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32603,"message":"tool failed"}}`, rpcID)
	case batchResult:
		return fmt.Sprintf(`[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},{"jsonrpc":"2.0","id":%d,"result":{}}]`, rpcID)
	}
	return ""
}

// write appends ev in layout l's field order.
func (l layout) write(b *strings.Builder, ev event, rpcID int) {
	eol := "\n"
	if l == python {
		eol = "\r\n"
	}
	line := func(s string) { b.WriteString(s); b.WriteString(eol) }
	if ev.kind == priming {
		switch l {
		case python:
			line("id: " + ev.id)
			line("data: ")
			line("retry: 1000")
		case gosdk:
			line("event: prime")
			line("id: " + ev.id)
			line("retry: 500")
			line("data: ")
		case csharp:
			line("event: prime")
			line("id: " + ev.id)
			line("data: ")
		default:
			line("id: " + ev.id)
			line("data: ")
		}
		line("")
		return
	}
	d := "data: " + data(ev.kind, rpcID)
	switch l {
	case python:
		line("id: " + ev.id)
		line("event: message")
		line(d)
	case ts, gosdk:
		line("event: message")
		line("id: " + ev.id)
		line(d)
	case csharp:
		line("event: message")
		line(d)
		line("id: " + ev.id)
	default:
		line(d)
		line("id: " + ev.id)
	}
	line("")
}

// body writes events in layout l and returns, beside the bytes, the offset
// at which each event ends.
func (l layout) body(evs []event) (string, []int) {
	var b strings.Builder
	ends := make([]int, len(evs))
	for i, ev := range evs {
		l.write(&b, ev, i+1)
		ends[i] = b.Len()
	}
	return b.String(), ends
}

// chunk splits body into the upstream's body chunks: one per event (an
// await between the SDK's writes), or at random offsets, or whole.
func chunk(rng *rand.Rand, body string, ends []int) [][]byte {
	var cuts []int
	switch rng.IntN(3) {
	case 0:
		cuts = ends
	case 1:
		for n := rng.IntN(6); n > 0; n-- {
			cuts = append(cuts, 1+rng.IntN(len(body)))
		}
	}
	var out [][]byte
	last := 0
	for _, c := range sortedUnique(cuts, len(body)) {
		out = append(out, []byte(body[last:c]))
		last = c
	}
	if last < len(body) || len(out) == 0 {
		out = append(out, []byte(body[last:]))
	}
	return out
}

func sortedUnique(cuts []int, n int) []int {
	seen := map[int]bool{}
	var out []int
	for _, c := range cuts {
		if c > 0 && c < n && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// sessionID is a session ID of a shape users have: a UUID, a JWT-like
// token, a hex digest, or any visible-ASCII string of the lengths the spec
// allows.
func sessionID(rng *rand.Rand) string {
	switch rng.IntN(4) {
	case 0:
		return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()&(1<<48-1))
	case 1:
		return "eyJhbGciOiJIUzI1NiJ9." + strings.Repeat(strconv.FormatUint(rng.Uint64(), 36), 6) + ".sig" + strconv.Itoa(rng.IntN(1000))
	case 2:
		return fmt.Sprintf("%016x%016x%016x%016x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
	}
	b := make([]byte, 1+rng.IntN(200))
	for i := range b {
		b[i] = byte(0x21 + rng.IntN(0x7e-0x21+1))
	}
	return string(b)
}
