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
			fmt.Printf("event id=%s kind=%v\n", ev.ID, ev.Kind())
		}
	}
	// Output:
	// "" changed=true
	// "id: sse:e-104\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n" changed=true
	// event id=e-104 kind=response
}

func ExampleRewriter_SetMint() {
	r := sse.NewRewriter(cursor.TransportHTTP, 4096)
	r.SetMint(true)
	r.Resume([]byte("abc_6")) // the stream resumes after upstream event abc_6
	body := []string{
		"event: message\nid: abc_7\n", // the id line is held until its event dispatches...
		"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n",
	}
	var out []byte
	for i, chunk := range body {
		out, _ = r.Rewrite(out[:0], []byte(chunk), i == len(body)-1)
		fmt.Printf("%q held=%q\n", out, r.Held())
	}
	c, _ := cursor.ParseCursor("http:~1r5.4.abc_76")
	fmt.Println(c.ID, c.Kind, c.Prev())
	// Output:
	// "event: message\n" held="id: abc_7\n"
	// "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\nid: http:~1r5.4.abc_76\n\n" held=""
	// abc_7 response abc_6
}
