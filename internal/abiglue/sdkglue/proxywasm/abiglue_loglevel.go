//go:build wasip1 && abiglue

// This file is compiled only inside the build's copy of the SDK
// (build/sdk/proxywasm), never in this repository's own packages.

package proxywasm

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm/internal"

// LogLevelDebug is the debug level GetLogLevel answers (the ABI's 1; trace
// is 0, info 2, warn 3, error 4, critical 5).
const LogLevelDebug = int(internal.LogLevelDebug)

// GetLogLevel returns the level below which the host drops log lines
// (proxy_get_log_level; Envoy answers its wasm component's level, which
// --component-log-level and the admin endpoint set), so that a plugin can
// skip building a line the host would drop.
func GetLogLevel() (int, error) {
	var level internal.LogLevel
	if st := internal.ProxyGetLogLevel(&level); st != internal.StatusOK {
		return 0, internal.StatusToError(st)
	}
	return int(level), nil
}
