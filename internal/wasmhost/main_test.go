package wasmhost

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/logbuf"
)

// testPlugins are built from testdata/<name> once per test binary.
var testPlugins = []string{"noop", "probe", "initcall", "read3"}

var pluginDir string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wasmhost-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pluginDir = dir
	root, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	errs := make([]error, len(testPlugins))
	var wg sync.WaitGroup
	for i, name := range testPlugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each build gets its own work directory: wasmbuild writes the
			// SDK copy and the overlay there.
			cmd := exec.Command("go", "run", "./internal/tools/wasmbuild",
				"-work", filepath.Join(dir, "work-"+name),
				"-o", filepath.Join(dir, name+".wasm"),
				"./internal/wasmhost/testdata/"+name)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("building test plugin %s: %v\n%s", name, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

func pluginWasm(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(pluginDir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newHost(t testing.TB, plugin string, opts Options) (*Host, *logbuf.Buffer) {
	t.Helper()
	logs := &logbuf.Buffer{}
	opts.Wasm = pluginWasm(t, plugin)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug - 4}))
	}
	h, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("New(%s): %v", plugin, err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, logs
}

func get(path string, extra ...Header) Headers {
	h := Headers{{":authority", "example.test"}, {":path", path}, {":method", "GET"}, {":scheme", "http"}}
	return append(h, extra...)
}

func ok200(extra ...Header) Headers {
	return append(Headers{{":status", "200"}, {"content-type", "text/plain"}}, extra...)
}

func newTestLogger(l *logbuf.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug - 4}))
}
