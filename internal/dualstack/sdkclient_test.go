package dualstack_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOfficialClient connects the official MCP Go SDK client over both
// transports, lists the tools, calls search_index, and follows slow_op's
// progress.
func TestOfficialClient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		opts      dualstack.Options
		transport func(base string) mcp.Transport
	}{
		{"streamable", dualstack.Options{FirstEventID: 100}, func(base string) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}
		}},
		// JSON answers: progress travels on the standalone GET stream.
		{"streamable_json", dualstack.Options{PreferJSON: true}, func(base string) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}
		}},
		{"legacy_sse", dualstack.Options{FirstEventID: 100}, func(base string) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: base + "/sse"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, ts := start(t, tc.opts)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			var mu sync.Mutex
			var progress []float64
			client := mcp.NewClient(&mcp.Implementation{Name: "sdk-test", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					progress = append(progress, req.Params.Progress)
				},
			})
			cs, err := client.Connect(ctx, tc.transport(ts.URL), nil)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
				t.Errorf("negotiated %q, want 2025-11-25", v)
			}

			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			var names []string
			for _, tool := range tools.Tools {
				names = append(names, tool.Name)
			}
			if strings.Join(names, ",") != "search_index,slow_op" {
				t.Errorf("tools = %v, want search_index, slow_op", names)
			}

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_index", Arguments: map[string]any{"query": "sdk"}})
			if err != nil {
				t.Fatalf("CallTool search_index: %v", err)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `run 1: 3 documents match "sdk"`) {
				t.Errorf("search_index result %q", text)
			}
			if got := srv.ToolRuns(dualstack.ToolSearchIndex); got != 1 {
				t.Errorf("search_index ran %d times, want 1", got)
			}

			params := &mcp.CallToolParams{Name: "slow_op", Arguments: map[string]any{"steps": 3, "interval_ms": 1}}
			params.SetProgressToken("slow-1")
			if _, err := cs.CallTool(ctx, params); err != nil {
				t.Fatalf("CallTool slow_op: %v", err)
			}
			// Notification handlers run asynchronously: the result can overtake
			// the last progress callback.
			var got []float64
			for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(5 * time.Millisecond) {
				mu.Lock()
				got = append(got[:0], progress...)
				mu.Unlock()
				if len(got) >= 3 || time.Now().After(deadline) {
					break
				}
			}
			if len(got) != 3 || got[2] != 3 {
				t.Errorf("slow_op progress = %v, want 1, 2, 3", got)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
				t.Error("calling an unknown tool succeeded")
			}
			if err := cs.Ping(ctx, nil); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}
}
