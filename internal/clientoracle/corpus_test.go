package clientoracle

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// A Case is one upstream response stream and how it reaches the guard.
type Case struct {
	Name string
	// Transport is the route's transport ("http": a POST on /mcp, "sse": the
	// legacy GET /sse) and Mint the guard's mint_cursors setting.
	Transport string
	Mint      bool
	// Chunks are the upstream's body chunks, in order.
	Chunks [][]byte
	// Traits name the edges the stream exercises (for the report and for
	// knownDefects).
	Traits map[string]bool
}

// Body is the whole upstream body.
func (c *Case) Body() []byte { return join(c.Chunks) }

func join(chunks [][]byte) []byte {
	var b []byte
	for _, c := range chunks {
		b = append(b, c...)
	}
	return b
}

// maxLine is the guard's max_line_bytes in these tests (its default).
const maxLine = 8192

// layout is an SDK server's way of writing an event (MCP-FACTS.md, "How
// SDKs write and read events").
type layout int

const (
	layoutTS     layout = iota // event, id, data; LF
	layoutPython               // id, event, data, then retry; CRLF
	layoutGo                   // event, id, retry, data; priming "event: prime"
	layoutCSharp               // event, data, id (id after data)
	layoutRust                 // data, id; no event line
	layoutMcpGo                // id (a decimal sequence), event, data
	layouts
)

var layoutNames = [...]string{"ts", "python", "go", "csharp", "rust", "mcp-go"}

// gen builds one stream.
type gen struct {
	rng    *rand.Rand
	l      layout
	eol    func() string
	b      strings.Builder
	traits map[string]bool
	seq    int    // event counter for IDs
	stream string // stream part of generated IDs
	// inEvent says a field line of an unfinished event was written, hadID
	// that it holds an id line.
	inEvent, hadID bool
}

// generate returns case i of the corpus of seed: deterministic.
func generate(seed uint64, i int) *Case {
	rng := rand.New(rand.NewPCG(seed, uint64(i)))
	g := &gen{rng: rng, l: layout(rng.IntN(int(layouts))), traits: map[string]bool{}}
	g.stream = g.streamID()
	g.pickEOL()
	c := &Case{Transport: "http", Mint: rng.IntN(2) == 0, Traits: g.traits}
	if rng.IntN(4) == 0 {
		c.Transport = "sse"
	}
	if rng.IntN(20) == 0 {
		g.b.WriteString("\ufeff")
		g.traits["bom"] = true
	}
	if c.Transport == "sse" && rng.IntN(3) > 0 {
		g.endpoint()
	}
	if rng.IntN(2) == 0 {
		g.priming()
	}
	for n := 1 + rng.IntN(6); n > 0; n-- {
		g.item()
	}
	g.ending()
	body := []byte(g.b.String())
	c.Chunks = g.split(body)
	c.Name = fmt.Sprintf("case %d (%s, %s, mint=%v)", i, layoutNames[g.l], c.Transport, c.Mint)
	return c
}

func (g *gen) pick(n int) int { return g.rng.IntN(n) }

// pickEOL chooses the stream's line endings: the layout's own, or a mix.
func (g *gen) pickEOL() {
	own := "\n"
	if g.l == layoutPython {
		own = "\r\n"
	}
	switch r := g.pick(10); {
	case r < 6:
		g.eol = func() string { return own }
	case r < 8:
		g.traits["mixed-eol"] = true
		g.eol = func() string { return [...]string{"\n", "\r\n", "\r"}[g.pick(3)] }
	case r < 9:
		g.traits["cr-only"] = true
		g.eol = func() string { return "\r" }
	default:
		g.traits["crlf"] = true
		g.eol = func() string { return "\r\n" }
	}
}

// line writes one field or comment line.
func (g *gen) line(s string) {
	g.b.WriteString(s)
	g.b.WriteString(g.eol())
	if !strings.HasPrefix(s, ":") {
		g.inEvent = true
	}
	if strings.HasPrefix(s, "id:") {
		g.hadID = true
	}
}

// end writes the blank line that dispatches an event.
func (g *gen) end() {
	g.b.WriteString(g.eol())
	g.inEvent, g.hadID = false, false
}

func (g *gen) streamID() string {
	switch g.l {
	case layoutTS:
		return "_GET_stream"
	case layoutGo:
		return strconv.Itoa(g.pick(50))
	}
	return ""
}

// nextID is the upstream's next event ID in the layout's format, now and
// then an edge: a value shaped like a minted cursor, spaces around it, a
// very long one, an empty one.
func (g *gen) nextID() string {
	g.seq++
	switch r := g.pick(160); {
	case r < 4:
		g.traits["tilde-id"] = true
		return [...]string{"~1o3.0.abc", "~1r1.0.xy", "~", "~~x"}[g.pick(4)]
	case r < 8:
		g.traits["spaced-id"] = true
		return " " + strconv.Itoa(g.seq) + " "
	case r < 12:
		g.traits["empty-id"] = true
		return ""
	case r < 13:
		g.traits["long-id"] = true
		return strings.Repeat("x", maxLine-3+g.pick(7))
	}
	switch g.l {
	case layoutTS:
		return fmt.Sprintf("%s_%d_%08x", g.stream, 1764600000000+int64(g.seq), g.rng.Uint32())
	case layoutPython:
		return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", g.rng.Uint32(), g.pick(1<<16), g.pick(1<<12), g.pick(1<<12), g.rng.Uint64()&(1<<48-1))
	case layoutGo:
		return g.stream + "_" + strconv.Itoa(g.seq)
	case layoutRust:
		return fmt.Sprintf("%d/%d", g.seq, g.pick(9))
	case layoutCSharp:
		return fmt.Sprintf("%x", g.rng.Uint64())
	}
	return strconv.Itoa(100 + g.seq) // mcp-go: one decimal sequence
}

// idLine is "id: X", sometimes without the space.
func (g *gen) idLine(id string) string {
	if g.pick(8) == 0 {
		return "id:" + id
	}
	return "id: " + id
}

func (g *gen) retryLine() string {
	if g.pick(6) == 0 {
		g.traits["bad-retry"] = true
		return "retry: " + [...]string{"1.5", "abc", "", " 20", "-5", "99999999999999999999"}[g.pick(6)]
	}
	g.traits["retry"] = true
	// Small values: the Go SDK waits that long before it reconnects.
	return "retry: " + strconv.Itoa(1+g.pick(150))
}

// endpoint is the legacy transport's first event.
func (g *gen) endpoint() {
	g.line("event: endpoint")
	g.line("data: /messages?sessionId=" + fmt.Sprintf("%032x", g.rng.Uint64()))
	g.end()
}

// priming is the layout's priming event: an ID and empty data.
func (g *gen) priming() {
	g.traits["priming"] = true
	id := g.nextID()
	switch g.l {
	case layoutPython:
		g.line(g.idLine(id))
		g.line("data: ")
		g.line(g.retryLine())
	case layoutGo, layoutCSharp:
		g.line("event: prime")
		g.line(g.idLine(id))
		if g.l == layoutGo {
			g.line(g.retryLine())
		}
		g.line("data: ")
	case layoutRust:
		g.line("data: ")
		g.line(g.idLine("0"))
	default:
		g.line(g.idLine(id))
		if g.pick(2) == 0 {
			g.line(g.retryLine())
		}
		g.line("data: ")
	}
	g.end()
}

// item writes one event or comment of the stream.
func (g *gen) item() {
	switch r := g.pick(80); {
	case r < 50:
		g.message(g.payload())
	case r < 54:
		g.traits["comment"] = true
		g.line([...]string{": keepalive", ": ping - 2026-12-01 19:00:00.000000+00:00", ":", ": ok"}[g.pick(4)])
		if g.pick(2) == 0 {
			g.end()
		}
	case r < 58:
		g.traits["no-data"] = true
		g.line(g.idLine(g.nextID()))
		if g.pick(2) == 0 {
			g.line("event: " + [...]string{"message", "close", "prime"}[g.pick(3)])
		}
		g.end()
	case r < 59:
		g.traits["event-only"] = true
		g.line("event: close")
		g.end()
	case r < 63:
		g.traits["repeated-id"] = true
		g.line(g.idLine(g.nextID()))
		g.line(g.idLine(g.nextID()))
		g.data(g.payload())
		g.end()
	case r < 65:
		g.traits["empty-id-line"] = true
		g.line([...]string{"id:", "id: "}[g.pick(2)])
		g.data(g.payload())
		g.end()
	case r < 67:
		g.line(g.retryLine())
		g.end()
	case r < 69:
		g.traits["unknown-field"] = true
		g.line([...]string{"foo: bar", "ID: x", "Data: y", "event : x"}[g.pick(4)])
		g.message(g.payload())
	case r < 71:
		g.traits["no-colon"] = true
		g.line([...]string{"data", "id", "event", "garbage"}[g.pick(4)])
		g.end()
	case r < 72:
		g.traits["long-line"] = true
		g.longEvent()
	case r < 75:
		g.traits["other-type"] = true
		g.line("event: " + [...]string{"progress", "endpoint", "notice"}[g.pick(3)])
		g.line(g.idLine(g.nextID()))
		g.data(g.payload())
		g.end()
	default:
		g.traits["multiline-data"] = true
		g.line(g.idLine(g.nextID()))
		g.line("data: {")
		g.line(`data:   "jsonrpc": "2.0",`)
		g.line(fmt.Sprintf(`data:   "id": %d,`, g.pick(100)))
		g.line(`data:   "result": {"content": []}`)
		g.line("data: }")
		g.end()
	}
}

// longEvent has an id line and then a line around max_line_bytes: an
// event name, a data line, or an unknown field.
func (g *gen) longEvent() {
	n := maxLine - 3 + g.pick(7)
	g.line(g.idLine(g.nextID()))
	switch g.pick(3) {
	case 0:
		g.traits["long-event-name"] = true
		g.line("event: " + strings.Repeat("e", n))
		g.data(g.payload())
	case 1:
		g.data(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"text":"%s"}}`, g.pick(100), strings.Repeat("t", n)))
	default:
		g.line("x-pad: " + strings.Repeat("p", n))
		g.data(g.payload())
	}
	g.end()
}

// message is one event in the layout's field order.
func (g *gen) message(data string) {
	id := g.nextID()
	ev := "event: message"
	if g.pick(10) == 0 {
		ev = "event:message"
	}
	switch g.l {
	case layoutTS:
		g.line(ev)
		g.line(g.idLine(id))
		g.data(data)
	case layoutPython:
		g.line(g.idLine(id))
		g.line(ev)
		g.data(data)
		if g.pick(4) == 0 {
			g.line(g.retryLine())
		}
	case layoutGo:
		g.line(ev)
		g.line(g.idLine(id))
		if g.pick(3) == 0 {
			g.line(g.retryLine())
		}
		g.data(data)
	case layoutCSharp:
		g.line(ev)
		g.data(data)
		g.line(g.idLine(id))
	case layoutRust:
		g.data(data)
		g.line(g.idLine(id))
	default:
		g.line(g.idLine(id))
		g.line(ev)
		g.data(data)
	}
	g.end()
}

// data writes a data line, now and then without the space, or with two.
func (g *gen) data(s string) {
	switch g.pick(12) {
	case 0:
		g.line("data:" + s)
	case 1:
		g.traits["data-two-spaces"] = true
		g.line("data:  " + s)
	default:
		g.line("data: " + s)
	}
}

// payload is a JSON-RPC message as MCP servers send them, or a batch, or
// a message cut short.
func (g *gen) payload() string {
	switch r := g.pick(30); {
	case r < 2:
		g.traits["batch"] = true
		n := 2 + g.pick(2)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = g.single()
		}
		return "[" + strings.Join(parts, ",") + "]"
	case r < 3:
		g.traits["truncated-json"] = true
		s := g.single()
		return s[:1+g.pick(len(s)-1)]
	}
	return g.single()
}

func (g *gen) rpcID() string {
	if g.pick(3) == 0 {
		return strconv.Quote(fmt.Sprintf("req-%d", g.pick(1000)))
	}
	return strconv.Itoa(g.pick(1000))
}

// text is content text of a size that sometimes crosses the rewriter's
// data prefix (512 bytes), with non-ASCII runes the chunking may cut.
func (g *gen) text() string {
	words := []string{"result", "café", "日本語", "🙂", "line\\nbreak", "quote\\\"d", "tab\\t", "ok"}
	n := 1 + g.pick(8)
	if g.pick(8) == 0 {
		n = 100 + g.pick(400)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.pick(len(words))])
	}
	return b.String()
}

// single is one JSON-RPC message.
func (g *gen) single() string {
	switch r := g.pick(12); {
	case r < 4:
		g.traits["result"] = true
		if g.l == layoutTS && g.pick(2) == 0 {
			return fmt.Sprintf(`{"result":{"content":[{"type":"text","text":"%s"}]},"jsonrpc":"2.0","id":%s}`, g.text(), g.rpcID())
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}],"isError":false}}`, g.rpcID(), g.text())
	case r < 5:
		g.traits["nil-result"] = true
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s}`, g.rpcID())
	case r < 7:
		g.traits["error"] = true
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"%s"}}`, g.rpcID(), g.text())
	case r < 10:
		g.traits["notification"] = true
		if g.pick(2) == 0 {
			return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":%d,"progress":%d,"total":100}}`, g.pick(50), g.pick(100))
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}}`, g.text())
	}
	g.traits["request"] = true
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"%s","params":{}}`, g.rpcID(), [...]string{"sampling/createMessage", "roots/list", "ping", "elicitation/create"}[g.pick(4)])
}

// ending finishes the stream: cleanly, inside an unterminated last event
// (its lines ended), or inside its last line.
func (g *gen) ending() {
	switch r := g.pick(10); {
	case r < 7:
		return
	case r < 9:
		g.traits["unterminated-event"] = true
		g.lastEvent()
	default:
		g.traits["unterminated-line"] = true
		g.lastEvent()
		s := g.b.String()
		s = strings.TrimRight(s, "\r\n")
		g.b.Reset()
		g.b.WriteString(s)
	}
}

// lastEvent writes an event without its blank line.
func (g *gen) lastEvent() {
	data := g.payload()
	switch g.pick(3) {
	case 0:
		g.line(g.idLine(g.nextID()))
		g.line("event: message")
		g.data(data)
	case 1:
		g.line("event: message")
		g.data(data)
		g.line(g.idLine(g.nextID()))
	default:
		g.data(data)
	}
	if g.hadID {
		g.traits["unterminated-with-id"] = true
	}
}

// split cuts the body into chunks: whole, at random points, after every
// CR (between CR and LF), or into tiny pieces.
func (g *gen) split(body []byte) [][]byte {
	var cuts []int
	switch r := g.pick(10); {
	case r < 2:
	case r < 6:
		for n := 1 + g.pick(6); n > 0 && len(body) > 1; n-- {
			cuts = append(cuts, 1+g.pick(len(body)-1))
		}
	case r < 8:
		g.traits["split-after-cr"] = true
		for i, c := range body {
			if c == '\r' && i+1 < len(body) {
				cuts = append(cuts, i+1)
			}
		}
	case len(body) > 3000:
		for n := 1 + g.pick(12); n > 0; n-- {
			cuts = append(cuts, 1+g.pick(len(body)-1))
		}
	default:
		g.traits["tiny-chunks"] = true
		for i := 1 + g.pick(3); i < len(body); i += 1 + g.pick(3) {
			cuts = append(cuts, i)
		}
	}
	return cutAt(body, cuts)
}

// cutAt splits b at the given offsets (any order, duplicates ignored).
func cutAt(b []byte, cuts []int) [][]byte {
	set := map[int]bool{}
	for _, c := range cuts {
		if c > 0 && c < len(b) {
			set[c] = true
		}
	}
	var out [][]byte
	last := 0
	for i := 1; i < len(b); i++ {
		if set[i] {
			out = append(out, b[last:i])
			last = i
		}
	}
	return append(out, b[last:])
}
