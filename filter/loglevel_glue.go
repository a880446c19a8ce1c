//go:build wasip1 && abiglue

package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// debugLogged reports whether the host writes debug lines, so that a line
// it would drop is not built: its level (proxy_get_log_level, through the
// ABI glue), asked at most once per second of now, the clock a resume reads
// anyway (now 0: not read, asked). A host that cannot say gets the line.
func (p *pluginContext) debugLogged(now uint32) bool {
	if now == 0 || now != p.logLevelAt {
		level, err := proxywasm.GetLogLevel()
		p.debugOn = err != nil || level <= proxywasm.LogLevelDebug
		p.logLevelAt = now
	}
	return p.debugOn
}
