package clientoracle

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// builtWasm is the artifact under test; make test (and make fuzz) build it
// first.
const builtWasm = "../../build/mcp-resume-guard.wasm"

// wasmBytes reads the built plugin once per test binary and refuses one
// that is older than the plugin's sources.
var wasmBytes = sync.OnceValues(func() ([]byte, error) { return builder.ReadFresh(builtWasm, "../../filter") })

// guardConfig is the plugin configuration: both transports, by path, and
// unacked_cursor "observe", so that every resume forwards the cursor with
// only the tag stripped (the default "rewind" would forward the previous
// ID for a response's cursor, by design) and the test can read each ID
// back as the upstream receives it.
func guardConfig(mint bool) string {
	return `{"routes":[{"path_prefix":"/mcp","transport":"http"},{"path_prefix":"/sse","transport":"sse"},` +
		`{"path_prefix":"/messages","transport":"sse"}],"unacked_cursor":"observe","max_line_bytes":` +
		strconv.Itoa(maxLine) + `,"mint_cursors":` + strconv.FormatBool(mint) + `}`
}

// guard runs the built plugin, one host per mint_cursors setting, and a
// third (minting, unacked_cursor at its default, rewind) that never sees a
// stream: a replica where no watermark mentions any cursor, so that only
// what a cursor says decides its resume (resumeElsewhere).
type guard struct {
	hosts     map[bool]*wasmhost.Host
	elsewhere *wasmhost.Host
}

func newGuard(t testing.TB) *guard {
	t.Helper()
	g, err := startGuard()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.close)
	return g
}

func startGuard() (*guard, error) {
	b, err := wasmBytes()
	if err != nil {
		return nil, err
	}
	g := &guard{hosts: map[bool]*wasmhost.Host{}}
	for _, mint := range []bool{false, true} {
		h, err := wasmhost.New(context.Background(), wasmhost.Options{Wasm: b, PluginConfig: []byte(guardConfig(mint)), VMs: 2})
		if err != nil {
			g.close()
			return nil, fmt.Errorf("starting the guard (mint_cursors %v): %w", mint, err)
		}
		g.hosts[mint] = h
	}
	cfg := strings.Replace(guardConfig(true), `"unacked_cursor":"observe",`, "", 1)
	h, err := wasmhost.New(context.Background(), wasmhost.Options{Wasm: b, PluginConfig: []byte(cfg), VMs: 1})
	if err != nil {
		g.close()
		return nil, fmt.Errorf("starting the guard (rewind): %w", err)
	}
	g.elsewhere = h
	return g, nil
}

func (g *guard) close() {
	for _, h := range g.hosts {
		h.Close(context.Background())
	}
	if g.elsewhere != nil {
		g.elsewhere.Close(context.Background())
	}
}

// session and principal of case n: as long as real ones.
func session(n int) string { return fmt.Sprintf("%08x-7c1e-4b2a-9f3d-%012x", n, n*7919) }
func principal(n int) string {
	return "Bearer eyJhbGciOiJSUzI1NiJ9." + strconv.Itoa(n) + ".c2lnbmF0dXJl"
}

func (c *Case) path() string {
	if c.Transport == "sse" {
		return "/sse"
	}
	return "/mcp"
}

// request is the request that opened the stream: a tools/call POST on
// Streamable HTTP, the legacy GET /sse.
func (c *Case) request(n int) (wasmhost.Headers, [][]byte) {
	h := wasmhost.Headers{{Key: ":authority", Value: "mcp.example.test"}, {Key: ":scheme", Value: "https"},
		{Key: ":path", Value: c.path()}, {Key: "authorization", Value: principal(n)}}
	if c.Transport == "sse" {
		h = append(h, wasmhost.Header{Key: ":method", Value: "GET"}, wasmhost.Header{Key: "accept", Value: "text/event-stream"})
		return h, nil
	}
	h = append(h, wasmhost.Header{Key: ":method", Value: "POST"}, wasmhost.Header{Key: "content-type", Value: "application/json"},
		wasmhost.Header{Key: "accept", Value: "application/json, text/event-stream"},
		wasmhost.Header{Key: "mcp-session-id", Value: session(n)}, wasmhost.Header{Key: "mcp-protocol-version", Value: "2025-11-25"})
	return h, [][]byte{[]byte(`{"jsonrpc":"2.0","id":"oracle-call","method":"tools/call","params":{"name":"echo","arguments":{}}}`)}
}

// run sends case n's stream through the guard and returns what the client
// receives, chunk by chunk.
func (g *guard) run(c *Case, n int) ([][]byte, error) {
	req, body := c.request(n)
	res, err := g.hosts[c.Mint].Simulate(wasmhost.Exchange{
		Request: req, RequestBody: body,
		Response:     wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"}, {Key: "cache-control", Value: "no-cache"}},
		ResponseBody: c.Chunks,
	})
	if err != nil {
		return nil, err
	}
	if res.Local != nil {
		return nil, fmt.Errorf("the guard answered the stream's request itself: %d %s", res.Local.Status, res.Local.Details)
	}
	return res.ResponseBody, nil
}

// resume sends id back through the guard as a client's resume of case n
// (a GET with Last-Event-ID on the same route) and returns the
// Last-Event-ID the upstream receives, or a description of what it got
// instead. Header values are trimmed of spaces and tabs as HTTP does on the
// wire, at both hops.
func (g *guard) resume(c *Case, n int, id string) string {
	return resumeOn(g.hosts[c.Mint], c, session(n), principal(n), id)
}

// resumeElsewhere is resume on the replica that saw no stream (under the
// default unacked_cursor, rewind), in a session of its own (k numbers the
// resumes of case n), so that a refusal tombstones nothing another resume
// uses.
func (g *guard) resumeElsewhere(c *Case, n, k int, id string) string {
	return resumeOn(g.elsewhere, c, fmt.Sprintf("%s-%d", session(n), k), principal(n), id)
}

func resumeOn(host *wasmhost.Host, c *Case, sess, who, id string) string {
	h := wasmhost.Headers{{Key: ":authority", Value: "mcp.example.test"}, {Key: ":scheme", Value: "https"},
		{Key: ":path", Value: c.path()}, {Key: ":method", Value: "GET"}, {Key: "accept", Value: "text/event-stream"},
		{Key: "authorization", Value: who}, {Key: "last-event-id", Value: trimOWS(id)}}
	if c.Transport == "http" {
		h = append(h, wasmhost.Header{Key: "mcp-session-id", Value: sess}, wasmhost.Header{Key: "mcp-protocol-version", Value: "2025-11-25"})
	}
	res, err := host.Simulate(wasmhost.Exchange{
		Request:  h,
		Response: wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"}},
	})
	switch {
	case err != nil:
		return "(host error: " + err.Error() + ")"
	case res.Local != nil:
		return fmt.Sprintf("(refused by the guard: %d %s)", res.Local.Status, res.Local.Details)
	}
	v, ok := res.Request.Get("last-event-id")
	if !ok {
		return "(no Last-Event-ID reached the upstream)"
	}
	return trimOWS(v)
}

// trimOWS trims HTTP's optional whitespace, as a header value read off the
// wire is.
func trimOWS(s string) string { return strings.Trim(s, " \t") }
