//go:build !wasip1

package main

import "time"

// unixNow returns the wall clock in whole seconds (see clock_wasip1.go).
func unixNow() uint32 { return uint32(time.Now().Unix()) }
