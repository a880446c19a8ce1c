package sse_test

import (
	"fmt"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
)

func ExampleRewriter() {
	r := sse.NewRewriter(cursor.TransportSSE, 4096)
	body := []string{
		"id: e-10", // the id line is held until its end...
		"4\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n",
	}
	var out []byte
	for i, chunk := range body {
		var changed bool
		out, changed = r.Rewrite(out[:0], []byte(chunk), i == len(body)-1)
		fmt.Printf("%q changed=%v\n", out, changed)
		for _, ev := range r.Events() {
			fmt.Printf("event id=%s kind=%v\n", ev.ID, ev.Kind)
		}
	}
	// Output:
	// "" changed=true
	// "id: sse:e-104\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n" changed=true
	// event id=e-104 kind=response
}
