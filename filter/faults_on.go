//go:build faults

package main

import "github.com/tetratelabs/proxy-wasm-go-sdk/proxywasm"

// A test build (-tags faults) panics at a named fault point when the host's
// property mcp_resume_guard_test.panic_at names it: the tests of failOpen
// need a panic inside a callback of the built .wasm, which no input of the
// product build causes. The product build compiles faults_off.go instead.

// faultBodyWithHeld is the point in a response-body callback right after the
// rewriter's held-back bytes (an id line cut by the previous chunk boundary)
// were copied and before the chunk is read.
const faultBodyWithHeld = "response_body_with_held"

var propPanicAt = []string{"mcp_resume_guard_test", "panic_at"}

func faultPoint(at string) {
	if b, err := proxywasm.GetProperty(propPanicAt); err == nil && string(b) == at {
		panic("mcp-resume-guard: injected fault at " + at)
	}
}
