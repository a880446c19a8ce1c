package soak

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// floodWorkers is how many flood requests are in flight at once.
const floodWorkers = 8

// floodResult is what the flood's requests were answered.
type floodResult struct {
	requests, odd int64
	example       string // an odd answer
}

// flood sends, for each of n made-up sessions (IDs no upstream issued, of
// a realistic length), a tools/call and a resume with a tagged cursor
// through the front. Every one must be answered 404 (the upstream does not
// know the session) or 400; the guard must record nothing for them, so the
// real sessions' watermarks stay (the losses say whether they did).
func flood(ctx context.Context, frontURL string, n int) floodResult {
	client := &http.Client{}
	defer client.CloseIdleConnections()
	var (
		res  floodResult
		odd  atomic.Int64
		reqs atomic.Int64
		once sync.Once
	)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range floodWorkers {
		wg.Go(func() {
			for i := range jobs {
				sid := madeUpSession()
				for _, req := range floodRequests(ctx, frontURL, sid, i) {
					reqs.Add(1)
					status, body := do(client, req)
					if status != http.StatusNotFound && status != http.StatusBadRequest {
						odd.Add(1)
						once.Do(func() {
							res.example = fmt.Sprintf("flood: %s %s (session %s): %d %s", req.Method, req.URL.Path, sid, status, body)
						})
					}
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	res.requests, res.odd = reqs.Load(), odd.Load()
	return res
}

// madeUpSession returns a session ID shaped like the reference upstream's
// long ones, which it never issued.
func madeUpSession() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "s-" + hex.EncodeToString(b[:])
}

// floodRequests are one made-up session's requests.
func floodRequests(ctx context.Context, frontURL, sid string, i int) []*http.Request {
	call, _ := http.NewRequestWithContext(ctx, http.MethodPost, frontURL+"/mcp", strings.NewReader(
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_index","arguments":{"query":"flood"}}}`, i)))
	call.Header.Set("Content-Type", "application/json")
	call.Header.Set("Accept", "application/json, text/event-stream")
	resume, _ := http.NewRequestWithContext(ctx, http.MethodGet, frontURL+"/mcp", nil)
	resume.Header.Set("Accept", "text/event-stream")
	resume.Header.Set("Last-Event-ID", fmt.Sprintf("http:e-%d", 1000000+i))
	for _, r := range []*http.Request{call, resume} {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	return []*http.Request{call, resume}
}

// do sends req and returns its status and the start of its body.
func do(c *http.Client, req *http.Request) (int, string) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return resp.StatusCode, string(body)
}
