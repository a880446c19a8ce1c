package dualstack

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names.
const (
	// ToolSearchIndex has a side effect: every execution is counted
	// ([Server.ToolRuns], /debug/stats "search_index_runs").
	ToolSearchIndex = "search_index"
	// ToolSlowOp reports progress for its own progress token, step by step.
	ToolSlowOp = "slow_op"
)

// tool is one tool the server offers.
type tool struct {
	def *mcp.Tool
	run func(tc *toolCall, args json.RawMessage) (*mcp.CallToolResult, error)
}

// toolCall is the context of one tools/call.
type toolCall struct {
	srv    *Server
	sess   *Session
	target *stream
	token  any // the request's progress token, or nil
}

// progress sends notifications/progress for the call's own token, if it has
// one, on the call's stream.
func (tc *toolCall) progress(done, total float64, message string) {
	if tc.token == nil {
		return
	}
	raw, err := json.Marshal(&mcp.ProgressNotificationParams{ProgressToken: tc.token, Progress: done, Total: total, Message: message})
	if err != nil {
		return
	}
	_, _ = tc.srv.emit(tc.sess, tc.target, &jsonrpc.Request{Method: "notifications/progress", Params: raw}, false)
}

func (srv *Server) tool(name string) *tool {
	for _, t := range srv.tools {
		if t.def.Name == name {
			return t
		}
	}
	return nil
}

func builtinTools() []*tool {
	return []*tool{
		{
			def: &mcp.Tool{
				Name:        ToolSearchIndex,
				Description: "Searches the document index. Not idempotent: every run is recorded (the seed's backing index).",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query"]}`),
			},
			run: runSearchIndex,
		},
		{
			def: &mcp.Tool{
				Name:        ToolSlowOp,
				Description: "Runs for steps × interval_ms and reports progress after each step.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"steps":{"type":"integer","minimum":1,"maximum":100},"interval_ms":{"type":"integer","minimum":0,"maximum":5000}}}`),
			},
			run: runSlowOp,
		},
	}
}

// runSearchIndex counts the run, reports two progress steps when the call has
// a progress token, and returns a text result naming the run number.
func runSearchIndex(tc *toolCall, args json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
	}
	if err := unmarshalParams(args, &in); err != nil {
		return nil, err
	}
	run := tc.srv.countRun(ToolSearchIndex)
	tc.progress(1, 2, "searching the index")
	tc.progress(2, 2, "ranking hits")
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
		Text: fmt.Sprintf("search_index run %d: 3 documents match %q", run, in.Query),
	}}}, nil
}

// runSlowOp sleeps steps × interval_ms, reporting progress after each step.
func runSlowOp(tc *toolCall, args json.RawMessage) (*mcp.CallToolResult, error) {
	in := struct {
		Steps      int `json:"steps"`
		IntervalMS int `json:"interval_ms"`
	}{Steps: 3, IntervalMS: 20}
	if err := unmarshalParams(args, &in); err != nil {
		return nil, err
	}
	if in.Steps < 1 || in.Steps > 100 || in.IntervalMS < 0 || in.IntervalMS > 5000 {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("slow_op: steps %d must be 1..100 and interval_ms %d 0..5000", in.Steps, in.IntervalMS)}
	}
	tc.srv.countRun(ToolSlowOp)
	for i := 1; i <= in.Steps; i++ {
		select {
		case <-time.After(time.Duration(in.IntervalMS) * time.Millisecond):
		case <-tc.srv.ctx.Done():
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "slow_op: server shutting down"}
		}
		tc.progress(float64(i), float64(in.Steps), fmt.Sprintf("step %d of %d", i, in.Steps))
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("slow_op finished %d steps", in.Steps)}}}, nil
}
