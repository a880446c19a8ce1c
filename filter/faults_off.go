//go:build !faults

package main

// Fault points: the product build has none (faults_on.go, built with
// -tags faults for the tests that need a panic inside a callback).
const faultBodyWithHeld = ""

func faultPoint(string) {}
