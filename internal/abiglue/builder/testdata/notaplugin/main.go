// Command notaplugin is a WASI program that uses no proxy-wasm SDK: the
// builder must refuse it, since it lacks the proxy-wasm exports.
package main

import "fmt"

func main() { fmt.Println("not a plugin") }
