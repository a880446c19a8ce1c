//go:build !(wasip1 && abiglue)

package main

// debugLogged reports whether the host writes debug lines; the SDK has no
// call to ask (proxytest keeps every line), so natively it always does.
func (p *pluginContext) debugLogged(uint32) bool { return true }
