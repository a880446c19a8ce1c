package reliability

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/abiglue/builder"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// guardWasm is the plugin and gcProbeWasm the benchmark's GC probe (one
// runtime.GC per request, built the same way), built once by TestMain.
var guardWasm, gcProbeWasm []byte

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	for _, p := range []struct {
		pkg string
		dst *[]byte
	}{{"./filter", &guardWasm}, {"./internal/refplugins/gcprobe", &gcProbeWasm}} {
		res, err := builder.Build(context.Background(), builder.Options{
			Package: p.pkg, Output: filepath.Join(dir, filepath.Base(p.pkg)+".wasm"),
			Dir: "../..", WorkDir: filepath.Join(dir, "work"), Log: io.Discard,
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", p.pkg, err)
			return 1
		}
		if *p.dst, err = os.ReadFile(res.Output); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// config is the plugin configuration of these tests: both transports
// guarded, by path.
const config = `{"routes":[
 {"path_prefix":"/mcp","transport":"http"},
 {"path_prefix":"/sse","transport":"sse"},
 {"path_prefix":"/messages","transport":"sse"}]`

// configWith returns config with extra top-level keys (",\"k\":v...").
func configWith(extra string) string { return config + extra + "}" }

// newHost starts the guard with the given configuration; opts.Wasm,
// PluginConfig and Logger are filled in.
func newHost(t testing.TB, cfg string, opts wasmhost.Options) (*wasmhost.Host, *logbuf.Buffer) {
	t.Helper()
	l := &logbuf.Buffer{}
	opts.Wasm = guardWasm
	opts.PluginConfig = []byte(cfg)
	opts.Logger = slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := wasmhost.New(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting the guard: %v", err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, l
}

// metric returns a plugin counter (without the mcp_resume_guard_ prefix).
func metric(h *wasmhost.Host, name string) int64 {
	v, _ := h.Metric("mcp_resume_guard_" + name)
	return v
}

// get is a GET request on path with extra headers.
func get(path string, extra ...wasmhost.Header) wasmhost.Headers {
	h := wasmhost.Headers{{Key: ":authority", Value: "mcp.example.test"}, {Key: ":path", Value: path},
		{Key: ":method", Value: "GET"}, {Key: ":scheme", Value: "https"}}
	return append(h, extra...)
}

// hdr is a header entry.
func hdr(k, v string) wasmhost.Header { return wasmhost.Header{Key: k, Value: v} }

// sseResponse is a 200 text/event-stream response with extra headers.
func sseResponse(extra ...wasmhost.Header) wasmhost.Headers {
	return append(wasmhost.Headers{{Key: ":status", Value: "200"}, {Key: "content-type", Value: "text/event-stream"}}, extra...)
}

// joined concatenates the chunks a client received.
func joined(chunks [][]byte) string {
	var b strings.Builder
	for _, c := range chunks {
		b.Write(c)
	}
	return b.String()
}
