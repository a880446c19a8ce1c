//go:build !wasip1

// Package wasiclock reads the wall clock in whole seconds with one WASI
// call (see clock_wasip1.go); elsewhere through time.Now.
package wasiclock

import "time"

// Unix returns the wall clock in whole seconds.
func Unix() uint32 { return uint32(time.Now().Unix()) }
