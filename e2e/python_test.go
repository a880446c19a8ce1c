package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/front"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// The Python SDK's replay layout through the guard (issue 31). The upstream
// answers as the official Python SDK's server does under 2025-11-25 polling
// (dualstack.LayoutPython): a tools/call's POST stream is only a priming
// event and closes; the client polls with GET and Last-Event-ID; the GET
// replays the call's progress and its result and then writes a fresh
// priming event, and closes:
//
//	POST  priming                                   (stream "post")
//	GET   progress, progress, result, priming       (stream "poll")
//	GET   result, priming                           (stream "replay": a resume after a cut)
//
// So a result is not the last event of its stream. Every row cuts one
// stream after one of its events with the embedded host's fault (a reset
// with flag SI after N complete events), and the client resumes as an
// official client does: from the last event it read, or, when the stream
// broke off after it read the result, from the result's ID (it read the
// result but had not processed it: the seed's drain race; whatever bytes
// came after, the priming event's included, it did not process either).

// pyCutHeader asks the replica serving a request to cut its response
// stream after that many complete events (wasmhost.Fault.CutAfterEvents).
const pyCutHeader = "X-E2e-Cut-After-Events"

// pyCutFault reads pyCutHeader.
func pyCutFault(r *http.Request) wasmhost.Fault {
	n, err := strconv.Atoi(r.Header.Get(pyCutHeader))
	if err != nil || n <= 0 {
		return wasmhost.Fault{}
	}
	return wasmhost.Fault{CutAfterEvents: n}
}

// Streams of one call, in the order the client opens them.
const (
	pyPost   = iota // the tools/call POST: its priming event
	pyPoll          // the first GET: progress, progress, result, priming
	pyReplay        // the resume after the poll was cut after the result: result, priming
)

// pyCut is where a row cuts: stream's events up to and including the
// after-th reach the client, then the stream is reset.
type pyCut struct {
	name   string
	stream int
	after  int
}

// pyCuts are the rows of one topology: after every event of the post and
// of the poll, and after every event of the replay that follows a cut of
// the poll after its result (the second cut).
var pyCuts = []pyCut{
	{"post:priming", pyPost, 1},
	{"poll:progress1", pyPoll, 1},
	{"poll:progress2", pyPoll, 2},
	{"poll:result", pyPoll, 3},
	{"poll:priming", pyPoll, 4},
	{"replay:result", pyReplay, 1},
	{"replay:priming", pyReplay, 2},
}

// at returns the cut header's value for the stream-th stream of a call
// ("" for none): a replay row cuts the poll after its result first.
func (c pyCut) at(stream int) string {
	switch {
	case c.stream == stream:
		return strconv.Itoa(c.after)
	case c.stream == pyReplay && stream == pyPoll:
		return "3"
	}
	return ""
}

// drainRace reports whether the row's client resumes with a result's ID.
func (c pyCut) drainRace() bool {
	return c.stream == pyReplay || (c.stream == pyPoll && c.after >= 3)
}

// Per row and session shape: pySessions sessions of pyCallsPerSession
// calls each (-short: 2 of 2), pyWorkers sessions at once.
const (
	pySessions        = 4
	pyCallsPerSession = 3
	pyWorkers         = 4
	// pyMaxGets bounds the GETs of one call: the poll, the resume after a
	// cut, the resume after the second cut, and one poll more before the
	// call counts as lost.
	pyMaxGets = 4
	// pyRetryMillis is the upstream's retry field; the client waits it
	// before every GET, as SEP-1699 asks.
	pyRetryMillis = 2
	// pyEventGap keeps the events of LayoutPython in separate body
	// chunks on loopback (dualstack.Options.EventGap).
	pyEventGap = 5 * time.Millisecond
)

// pyTopology is one topology of TestPythonLayoutCuts.
type pyTopology struct {
	replicas       int
	layout         dualstack.Layout
	sessionIDBytes int // 0: the Python SDK's uuid4().hex (32 bytes)
}

func (p pyTopology) String() string {
	return fmt.Sprintf("%d/%s/sid%d", p.replicas, p.layout, p.sidBytes())
}

func (p pyTopology) sidBytes() int {
	if p.sessionIDBytes == 0 {
		return 32
	}
	return p.sessionIDBytes
}

// reqRef names one request of a session: its method and how many requests
// of that method the session made before it (tool calls' POSTs and GETs
// only: the client opens no other stream).
type reqRef struct {
	method string
	n      int
}

// pyCall is what one call of a row saw.
type pyCall struct {
	session    string
	delivered  bool // the result reached the application
	onResume   bool // on a resume after a cut
	drainRaces int  // resumes with a result's ID
	cuts       int  // streams that broke off
	reinit     bool // a resume was refused (404): called again on a new session
	reason     string
	lost       bool
	// cutReq and resumeReq are the first cut stream's request and the
	// request that resumed it.
	cutReq, resumeReq *reqRef
	trace             []string // what the client did, for a lost call
	err               error
}

// pyClient plays the calls of one session.
type pyClient struct {
	*scenarioClient
	sid         string
	posts, gets int
}

func newPyClient(rs *Replicas) *pyClient {
	return &pyClient{scenarioClient: newScenarioClient(rs, nil)}
}

// start opens the session.
func (c *pyClient) start(ctx context.Context) error {
	sid, err := c.initialize(ctx)
	c.sid, c.posts, c.gets = sid, 0, 0
	return err
}

// pyToolCall is a tools/call of search_index with a progress token.
func pyToolCall(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"query":"python %d"},"_meta":{"progressToken":"py-%d"}}}`,
		id, dualstack.ToolSearchIndex, id, id)
}

// pyRead reads a stream to its end; cut reports that it broke off instead of
// ending cleanly. A stream broken off inside an event drops that event.
func pyRead(body io.Reader) (evs []sseEvent, cut bool) {
	r := newSSEReader(body)
	for {
		ev, err := r.next()
		if errors.Is(err, io.EOF) {
			return evs, false
		}
		if err != nil {
			return evs, true
		}
		evs = append(evs, ev)
	}
}

// pyHeaders returns the headers of a request of the call: the protocol
// version (the Python SDK decides priming and polling by it), the stream
// token, and the cut when the row asks for one on this stream.
func pyHeaders(tok, cut string) http.Header {
	h := http.Header{"Mcp-Protocol-Version": {"2025-11-25"}, StreamTokenHeader: {tok}}
	if cut != "" {
		h[pyCutHeader] = []string{cut}
	}
	return h
}

// play makes call id on the session under row cut and follows it as an
// official client does until the result reached the application, the
// guard refused a resume (then the application calls again on a new
// session), or pyMaxGets GETs brought nothing.
func (c *pyClient) play(ctx context.Context, id int, cut pyCut) pyCall {
	out := pyCall{session: c.sid}
	fail := func(err error) pyCall { out.err = fmt.Errorf("%s call %d: %w", cut.name, id, err); return out }
	tok := newToken()
	post := &reqRef{http.MethodPost, c.posts}
	c.posts++
	resp, err := c.openSSE(ctx, c.sid, pyToolCall(id), pyHeaders(tok, cut.at(pyPost)))
	if err != nil {
		return fail(err)
	}
	evs, broke := pyRead(resp.Body)
	resp.Body.Close()
	if err := c.waitEnded(ctx, tok); err != nil {
		return fail(err)
	}
	if len(evs) != 1 || evs[0].data != "" || evs[0].id == "" {
		return fail(fmt.Errorf("the POST stream carried %+v, want one priming event (polling)", evs))
	}
	from := evs[0].id
	out.trace = append(out.trace, fmt.Sprintf("post=[priming %s] cut=%t", from, broke))
	if broke {
		out.cuts++
		out.cutReq = post
	}
	if err := c.logged(ctx, id); err != nil {
		return fail(err)
	}
	for stream := pyPoll; stream < pyPoll+pyMaxGets; stream++ {
		time.Sleep(pyRetryMillis * time.Millisecond)
		tok := newToken()
		get := &reqRef{http.MethodGet, c.gets}
		c.gets++
		if out.cutReq != nil && out.resumeReq == nil {
			out.resumeReq = get
		}
		resp, err := c.openStream(ctx, "/mcp", c.sid, from, pyHeaders(tok, cut.at(stream)))
		if err != nil {
			return fail(err)
		}
		if resp.StatusCode == http.StatusNotFound {
			out.reinit = true
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			out.reason = cursor.ReinitReason(body)
			resp.Body.Close()
			out.trace = append(out.trace, fmt.Sprintf("get(%s)=404 %s", from, out.reason))
			return c.again(ctx, id, out)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return fail(fmt.Errorf("GET from %s: %s", from, resp.Status))
		}
		evs, broke := pyRead(resp.Body)
		resp.Body.Close()
		if err := c.waitEnded(ctx, tok); err != nil {
			return fail(err)
		}
		out.trace = append(out.trace, fmt.Sprintf("get(%s)=%s cut=%t", from, describe(evs, id), broke))
		at := slices.IndexFunc(evs, func(ev sseEvent) bool { return isResponseTo(ev, id) })
		switch {
		case at >= 0 && !broke:
			out.delivered, out.onResume = true, stream > pyPoll || out.cuts > 0
			return out
		case at >= 0:
			// Read, not processed: the stream broke off first.
			from = evs[at].id
			out.drainRaces++
		case len(evs) > 0:
			from = evs[len(evs)-1].id
		}
		if broke {
			out.cuts++
			if out.cutReq == nil {
				out.cutReq = get
			}
		}
	}
	out.lost = true
	return out
}

// again calls id once more on a new session, as the application must after
// a forced re-initialization, without cuts.
func (c *pyClient) again(ctx context.Context, id int, out pyCall) pyCall {
	if err := c.start(ctx); err != nil {
		out.err = fmt.Errorf("after the re-initialization: %w", err)
		return out
	}
	r := c.play(ctx, id+1000, pyCut{name: "none", stream: -1})
	out.delivered, out.err = r.delivered, r.err
	out.lost = !r.delivered
	out.trace = append(out.trace, "again on a new session: "+strings.Join(r.trace, "; "))
	return out
}

// logged waits until the upstream logged the response to call id.
func (c *pyClient) logged(ctx context.Context, id int) error {
	for {
		evs, _ := c.rs.Upstream.Events(c.sid)
		for _, ev := range evs {
			if ev.Kind == dualstack.KindResponse && isResponseTo(sseEvent{data: string(ev.Data)}, id) {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the upstream never logged the response to call %d: %w", id, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// describe names a stream's events for a trace.
func describe(evs []sseEvent, id int) string {
	var parts []string
	for _, ev := range evs {
		switch {
		case ev.data == "":
			parts = append(parts, "priming")
		case isResponseTo(ev, id):
			parts = append(parts, "result")
		default:
			parts = append(parts, "progress")
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// pyRow is the tally of one row.
type pyRow struct {
	calls, delivered, onResume, drainRaces, cuts, reinits, losses int
	resumes, sameReplica                                          int
	toolRuns                                                      int
	reasons                                                       map[string]int
	examples                                                      []string
	errs                                                          []string
}

// TestPythonLayoutCuts plays, through the built plugin on 1 replica and on
// 3 behind round robin, tool calls against an upstream that answers as the
// Python SDK's server does (one flush per event, and everything that is
// ready together in one chunk; the SDK's 32-byte session IDs and 300-byte
// JWT-shaped ones), cut after every event of the call's POST and poll, and
// after every event of the replay that follows the drain race. It prints
// one line per row and checks, on every row, that no result is lost:
//
//	scenario=python_layout replicas=<n> front=round_robin chunks=<python|python-one-chunk> session_id_bytes=<n> cut=<stream:event> calls=<n> drain_races=<n> cuts=<n> resumes=<n> same_replica=<n> losses=<n> reinits=<n> delivered_on_resume=<n> tool_runs_per_call=<x>
//
// drain_races counts resumes with a result's ID, cuts the streams that
// broke off, resumes the first GETs after a cut and same_replica those that
// reached the replica that served the cut stream (where the guard holds the
// stream's watermark: a result followed by a priming event is the tail's
// previous event, not its last).
func TestPythonLayoutCuts(t *testing.T) {
	skipExternal(t, "guard replicas of the embedded host with its cut fault, in front of an upstream in the Python SDK's layout")
	start := time.Now()
	var (
		mu    sync.Mutex
		lines = map[string][]string{}
		order []string
	)
	t.Run("rows", func(t *testing.T) {
		for _, replicas := range []int{1, 3} {
			for _, layout := range []dualstack.Layout{dualstack.LayoutPython, dualstack.LayoutPythonOneChunk} {
				for _, sid := range []int{0, 300} {
					top := pyTopology{replicas: replicas, layout: layout, sessionIDBytes: sid}
					order = append(order, top.String())
					t.Run(top.String(), func(t *testing.T) {
						t.Parallel()
						out := playPythonTopology(t, top)
						mu.Lock()
						lines[top.String()] = out
						mu.Unlock()
					})
				}
			}
		}
	})
	var all []string
	for _, k := range order {
		all = append(all, lines[k]...)
	}
	t.Logf("%d rows in %s:\n%s", len(all), time.Since(start).Round(time.Millisecond), strings.Join(all, "\n"))
}

// playPythonTopology starts one topology, plays its rows one after the
// other, prints and checks each, and returns their lines.
func playPythonTopology(t *testing.T, top pyTopology) []string {
	rs, err := StartReplicas(context.Background(), ReplicaOptions{
		Wasm:         pluginWasm(t),
		PluginConfig: pluginConfigWith(t, nil),
		Replicas:     top.replicas,
		Front:        front.RoundRobin,
		Fault:        pyCutFault,
		Upstream: dualstack.Options{
			Layout: top.layout, RetryMillis: pyRetryMillis, EventGap: pyEventGap,
			SessionIDBytes: top.sessionIDBytes,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Close)
	sessions, calls := pySessions, pyCallsPerSession
	if testing.Short() {
		sessions, calls = 2, 2
	}
	var out []string
	for _, cut := range pyCuts {
		row := playPythonRow(rs, cut, sessions, calls)
		line := fmt.Sprintf("scenario=python_layout replicas=%d front=round_robin chunks=%s session_id_bytes=%d cut=%s calls=%d drain_races=%d cuts=%d resumes=%d same_replica=%d losses=%d reinits=%d delivered_on_resume=%d tool_runs_per_call=%.2f",
			top.replicas, top.layout, top.sidBytes(), cut.name, row.calls, row.drainRaces, row.cuts, row.resumes, row.sameReplica,
			row.losses, row.reinits, row.onResume, float64(row.toolRuns)/float64(max(row.calls, 1)))
		fmt.Println(line)
		out = append(out, line)
		checkPythonRow(t, top, cut, row, sessions*calls)
	}
	// The cuts show up here as bodies the front's reverse proxy could not
	// copy to the end; only a plugin that failed is an error.
	for _, f := range rs.Failures() {
		if strings.Contains(f, wasmhost.EndHostFailure.String()) {
			t.Errorf("a replica's plugin failed: %s", f)
		}
	}
	return out
}

// playPythonRow plays one row: sessions sessions of calls calls each,
// pyWorkers at once, each session on its own connections.
func playPythonRow(rs *Replicas, cut pyCut, sessions, calls int) *pyRow {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	runsBefore := rs.Upstream.ToolRuns(dualstack.ToolSearchIndex)
	row := &pyRow{reasons: map[string]int{}}
	var (
		mu      sync.Mutex
		results []pyCall
		wg      sync.WaitGroup
	)
	jobs := make(chan int)
	for range pyWorkers {
		wg.Go(func() {
			for range jobs {
				c := newPyClient(rs)
				if err := c.start(ctx); err != nil {
					mu.Lock()
					row.errs = append(row.errs, err.Error())
					mu.Unlock()
					c.close()
					continue
				}
				// After a forced re-initialization the rest of the calls go
				// to the session the application opened to call again.
				for i := range calls {
					r := c.play(ctx, 10+i, cut)
					mu.Lock()
					results = append(results, r)
					mu.Unlock()
				}
				c.close()
			}
		})
	}
	for range sessions {
		jobs <- 0
	}
	close(jobs)
	wg.Wait()
	row.toolRuns = rs.Upstream.ToolRuns(dualstack.ToolSearchIndex) - runsBefore
	backends := placementsBySession(rs)
	for _, r := range results {
		if r.err != nil {
			row.errs = append(row.errs, r.err.Error())
			continue
		}
		row.calls++
		row.drainRaces += r.drainRaces
		row.cuts += r.cuts
		if r.delivered {
			row.delivered++
		}
		if r.onResume {
			row.onResume++
		}
		if r.reinit {
			row.reinits++
			row.reasons[r.reason]++
		}
		if r.lost {
			row.losses++
			if len(row.examples) < 3 {
				row.examples = append(row.examples, fmt.Sprintf("session %.12s…: %s", r.session, strings.Join(r.trace, "; ")))
			}
		}
		if r.cutReq != nil && r.resumeReq != nil {
			row.resumes++
			if b := backends[r.session]; b != nil && b(*r.cutReq) >= 0 && b(*r.cutReq) == b(*r.resumeReq) {
				row.sameReplica++
			}
		}
	}
	return row
}

// placementsBySession returns, per session, which replica served its n-th
// request of a method (-1 when unknown), from the front's placements.
func placementsBySession(rs *Replicas) map[string]func(reqRef) int {
	seen := map[string]map[string][]int{}
	for _, p := range rs.Front.Placements() {
		if p.Session == "" || p.Path != "/mcp" {
			continue
		}
		if seen[p.Session] == nil {
			seen[p.Session] = map[string][]int{}
		}
		seen[p.Session][p.Method] = append(seen[p.Session][p.Method], p.Backend)
	}
	out := map[string]func(reqRef) int{}
	for s, m := range seen {
		out[s] = func(r reqRef) int {
			if r.n < len(m[r.method]) {
				return m[r.method][r.n]
			}
			return -1
		}
	}
	return out
}

// checkPythonRow fails the test on a lost result, a scenario that could not
// be played, or a row that did not play what it says.
func checkPythonRow(t *testing.T, top pyTopology, cut pyCut, row *pyRow, want int) {
	t.Helper()
	name := fmt.Sprintf("%v cut=%s", top, cut.name)
	if len(row.errs) > 0 {
		t.Errorf("%s: %d call(s) could not be played, e.g. %s", name, len(row.errs), row.errs[0])
	}
	if row.calls != want {
		t.Errorf("%s: %d calls played, want %d", name, row.calls, want)
	}
	if row.losses != 0 {
		t.Errorf("%s: %d of %d results lost (want 0), e.g.:\n%s", name, row.losses, row.calls, strings.Join(row.examples, "\n"))
	}
	if row.delivered != row.calls {
		t.Errorf("%s: %d of %d results delivered", name, row.delivered, row.calls)
	}
	if row.reinits > 0 {
		t.Logf("%s: %d re-initializations by reason %v", name, row.reinits, row.reasons)
	}
	// The row played what it says: every call's stream was cut (twice on a
	// replay row, unless the first resume already failed), and a drain race
	// row's client resumed with the result's ID.
	cuts := row.calls
	if cut.stream == pyReplay {
		cuts = 2*row.calls - row.losses - row.reinits
	}
	if row.cuts < cuts {
		t.Errorf("%s: %d streams cut, want %d: the fault did not cut where the row says", name, row.cuts, cuts)
	}
	if cut.drainRace() && row.drainRaces < row.calls {
		t.Errorf("%s: %d drain races in %d calls, want one per call at least", name, row.drainRaces, row.calls)
	}
	if top.replicas == 1 && row.sameReplica != row.resumes {
		t.Errorf("%s: %d of %d resumes on the replica of the cut stream, want all on 1 replica", name, row.sameReplica, row.resumes)
	}
	if row.toolRuns != row.calls+row.reinits {
		t.Errorf("%s: search_index ran %d times for %d calls and %d calls again, want one run each", name, row.toolRuns, row.calls, row.reinits)
	}
}
