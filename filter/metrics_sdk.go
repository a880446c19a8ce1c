//go:build !wasip1

package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// defineCounter defines a counter through the SDK (native tests: proxytest).
func defineCounter(name string) uint32 {
	return uint32(proxywasm.DefineCounterMetric(name))
}

// incrementCounter increments a counter through the SDK, which panics when
// the host refuses; a panic must not escape a callback.
func incrementCounter(id uint32, n int64) {
	defer func() { _ = recover() }()
	proxywasm.MetricCounter(id).Increment(uint64(n))
}
