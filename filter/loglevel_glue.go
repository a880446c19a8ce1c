//go:build wasip1 && abiglue

package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// debugLogged reports whether the host writes debug lines, so that a line
// it would drop is not built: its level (proxy_get_log_level, through the
// ABI glue), asked at most once per second of now, the clock a resume reads
// anyway, or, for decisions made without reading the clock (now 0: a legacy
// reconnect without a session), once per unclockedAsks of them. A host that
// cannot say gets the line. The answer of this second is tested here, small
// enough to inline into every caller; the rest is askLogLevel.
func (p *pluginContext) debugLogged(now uint32) bool {
	// now 0 (no clock reading) never matches: levelNext is 0 or 1 + a
	// reading, never 1.
	if now+1 == p.levelNext {
		return p.debugOn
	}
	return p.askLogLevel(now)
}

// askLogLevel is debugLogged when the level was not asked in the second of
// now: the answer kept for a clockless decision, or the host's.
func (p *pluginContext) askLogLevel(now uint32) bool {
	if now == 0 && p.unclockedLeft > 0 {
		p.unclockedLeft--
		return p.debugOn
	}
	level, err := proxywasm.GetLogLevel()
	p.debugOn = err != nil || level <= proxywasm.LogLevelDebug
	p.levelNext, p.unclockedLeft = 0, unclockedAsks
	if now != 0 {
		p.levelNext = now + 1
	}
	return p.debugOn
}

// unclockedAsks bounds the decisions without a clock reading that reuse the
// host's log level between two asks.
const unclockedAsks = 1024
