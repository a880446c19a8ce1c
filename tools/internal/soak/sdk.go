package soak

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callAttempts bounds how many times the SDK application makes one call
// after explicit failures (an error the client returned, not a timeout).
const callAttempts = 3

// sdkSession is session i played by the official Go SDK client over hc:
// connect, CallsPerSession calls of search_index with a progress token,
// close. After an explicit failure the application starts a new session and
// calls again. name says which client it was in a lost call's example.
func (r *run) sdkSession(ctx context.Context, i int, hc *http.Client, name string) {
	var cs *mcp.ClientSession
	defer func() {
		if cs != nil {
			_ = cs.Close()
		}
	}()
	for c := range r.o.CallsPerSession {
		r.calls.Add(1)
		query := fmt.Sprintf("soak %d.%d", i, c)
		var why []string
		got := false
		for attempt := 0; attempt < callAttempts && !got; attempt++ {
			if attempt > 0 {
				r.appRetries.Add(1)
			}
			if cs == nil {
				var err error
				if cs, err = r.connect(ctx, hc); err != nil {
					why = append(why, "connect: "+err.Error())
					continue
				}
			}
			out, err := r.callSearch(ctx, cs, query)
			if out == callOK {
				got = true
				break
			}
			why = append(why, err.Error())
			if out != callFailed {
				break // a timeout waited out, or a wrong result: lost
			}
			_ = cs.Close()
			cs = nil
		}
		if !got {
			r.loseCall(fmt.Sprintf("%s session %d call %d: %s", name, i, c, strings.Join(why, "; then ")))
		}
		r.done.Add(1)
	}
}

// connect opens a session of the SDK client through the front over hc.
func (r *run) connect(ctx context.Context, hc *http.Client) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-resume-guard-soak", Version: "1"}, nil)
	return client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.top.frontURL + "/mcp", HTTPClient: hc}, nil)
}

// What one call got.
const (
	callOK     = iota
	callFailed // an explicit failure: the application may call again
	callTimedOut
	callWrong // the result of another call
)

// callSearch calls search_index once and checks that the result is this
// call's (the tool echoes the query).
func (r *run) callSearch(ctx context.Context, cs *mcp.ClientSession, query string) (int, error) {
	cctx, cancel := context.WithTimeout(ctx, r.o.CallTimeout)
	defer cancel()
	params := &mcp.CallToolParams{Name: dualstack.ToolSearchIndex, Arguments: map[string]any{"query": query}}
	params.SetProgressToken(query)
	res, err := cs.CallTool(cctx, params)
	switch {
	case err != nil && cctx.Err() != nil && ctx.Err() == nil:
		return callTimedOut, fmt.Errorf("no result within %s: %w", r.o.CallTimeout, err)
	case err != nil:
		return callFailed, err
	case res.IsError || len(res.Content) == 0:
		return callFailed, fmt.Errorf("tool error: %+v", res.Content)
	}
	text, _ := res.Content[0].(*mcp.TextContent)
	if text == nil || !strings.Contains(text.Text, fmt.Sprintf("match %q", query)) {
		return callWrong, errors.New("the result of another call: " + fmt.Sprint(res.Content[0]))
	}
	return callOK, nil
}
