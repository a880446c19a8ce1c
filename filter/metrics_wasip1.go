//go:build wasip1

package main

import "unsafe"

// The plugin defines and increments its counters with the proxy-wasm host
// functions directly: the SDK's metric functions format their panics with
// fmt, which alone would bring fmt and reflect into the .wasm (about 300 KB
// of code and data, more than the whole filter).

//go:wasmimport env proxy_define_metric
func hostDefineMetric(metricType uint32, name *byte, nameSize uint32, retID *uint32) uint32

//go:wasmimport env proxy_increment_metric
func hostIncrementMetric(metricID uint32, offset int64) uint32

// metricID receives proxy_define_metric's out-parameter: a package variable,
// never a stack slot (see internal/abiglue: the stack may move while the
// host holds an address into it).
var metricID uint32

const metricTypeCounter = 0

// defineCounter defines a counter; a name the host refuses yields id 0,
// whose increments the host refuses in turn.
func defineCounter(name string) uint32 {
	metricID = 0
	if hostDefineMetric(metricTypeCounter, unsafe.StringData(name), uint32(len(name)), &metricID) != 0 {
		return 0
	}
	return metricID
}

// incrementCounter increments a counter; a refusal is ignored.
func incrementCounter(id uint32, n int64) {
	hostIncrementMetric(id, n)
}
