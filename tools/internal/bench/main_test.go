package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	wasmOnce sync.Once
	wasmBin  *Wasm
	wasmErr  error
)

// testWasm builds the plugins once per test binary, in a private work
// directory so that concurrent builds of other packages do not interfere.
func testWasm(t testing.TB) *Wasm {
	t.Helper()
	wasmOnce.Do(func() {
		dir, err := os.MkdirTemp("", "bench-test-")
		if err != nil {
			wasmErr = err
			return
		}
		wasmBin, wasmErr = BuildPlugins(context.Background(), BuildOptions{
			Root: "../../..", Dir: dir, WorkDir: filepath.Join(dir, "work"),
		})
		if wasmErr != nil {
			wasmErr = fmt.Errorf("building the plugins: %w", wasmErr)
		}
	})
	if wasmErr != nil {
		t.Fatal(wasmErr)
	}
	return wasmBin
}
