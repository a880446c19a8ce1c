package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/front"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// Scenarios per combination of TestReplicas, each on its own session: at
// least 200 drain races, clean resumes and cross-transport resumes per
// 3-replica row; the 1-replica control rows play fewer. -short plays a
// tenth.
var (
	replicaScenarios = map[int]map[scenarioKind]int{
		3: {drainRace: 200, cleanResume: 200, crossTransport: 200, afterCleanEnd: 60},
		1: {drainRace: 50, cleanResume: 50, crossTransport: 50, afterCleanEnd: 20},
	}
)

// replicaWorkers is how many scenarios of one combination run at once:
// clients arrive concurrently, so the front's round robin interleaves them.
const replicaWorkers = 8

// scenarioKind is one of the scenarios of the replicated topology.
type scenarioKind int

const (
	// drainRace: a tools/call of search_index whose stream is cut after
	// the response was read and before it was processed; the client
	// resumes with the response's ID (the seed's drain race, on Streamable
	// HTTP) and must get the response, on the resume or, after a forced
	// re-initialization, by calling again on a new session.
	drainRace scenarioKind = iota
	// cleanResume: what clients really do after a cut: a tools/call of
	// slow_op whose stream is cut after its progress notification, before
	// the response; the client resumes with the notification's ID and gets
	// the response. A forced re-initialization is a false alarm.
	cleanResume
	// crossTransport: the seed: a legacy stream cut after a tool result,
	// resumed at /mcp with the bridged session and the result's ID; it must
	// be re-initialized, whatever replica it reaches.
	crossTransport
	// afterCleanEnd: artificial (no official client does it): a call read
	// to its clean end, then a resume with the response's ID.
	afterCleanEnd
)

var scenarioKinds = []scenarioKind{drainRace, cleanResume, crossTransport, afterCleanEnd}

func (k scenarioKind) String() string {
	return [...]string{"drain_race", "clean_resume", "cross_transport", "after_clean_end"}[k]
}

// scenarioResult is one played scenario.
type scenarioResult struct {
	kind    scenarioKind
	session string
	resume  resumeResult
	err     error
}

// play plays one scenario of kind k as client c.
func (k scenarioKind) play(ctx context.Context, c *scenarioClient) scenarioResult {
	ctx, cancel := context.WithTimeout(ctx, scenarioStreamWait)
	defer cancel()
	out := scenarioResult{kind: k}
	var cursor string
	var err error
	switch k {
	case crossTransport:
		out.session, cursor, err = c.legacyCut(ctx, dualstack.ToolSlowOp)
	case afterCleanEnd:
		if out.session, err = c.initialize(ctx); err == nil {
			tok := newToken()
			var ev sseEvent
			if ev, err = c.callToEnd(ctx, out.session, callTool, dualstack.ToolSlowOp, http.Header{StreamTokenHeader: {tok}}); err == nil {
				cursor, err = ev.id, c.waitEnded(ctx, tok)
			}
		}
	case drainRace:
		if out.session, err = c.initialize(ctx); err == nil {
			cursor, err = c.cutAt(ctx, out.session, dualstack.ToolSearchIndex, func(ev sseEvent) bool { return isResponseTo(ev, callTool) })
		}
	case cleanResume:
		if out.session, err = c.initialize(ctx); err == nil {
			cursor, err = c.cutAt(ctx, out.session, dualstack.ToolSlowOp, func(ev sseEvent) bool { return isProgress(ev, "p") })
			if err == nil {
				err = c.upstreamLogged(ctx, out.session)
			}
		}
	}
	if err != nil {
		out.err = fmt.Errorf("%v before the resume: %w", k, err)
		return out
	}
	if out.resume, err = c.resume(ctx, "/mcp", out.session, cursor, callTool); err != nil {
		out.err = fmt.Errorf("%v: %w", k, err)
		return out
	}
	// After a forced re-initialization the application calls again on a
	// new session; after a cross-transport one too, but that call is not
	// what this topology measures, and after a clean end it has its result.
	if out.resume.reinit() && (k == drainRace || k == cleanResume) {
		tool := dualstack.ToolSlowOp
		if k == drainRace {
			tool = dualstack.ToolSearchIndex
		}
		if err := c.retry(ctx, tool); err != nil {
			out.err = fmt.Errorf("%v: %w", k, err)
		}
	}
	return out
}

// replicaTally is what the scenarios of one combination observed.
type replicaTally struct {
	played                          map[scenarioKind]int
	sessions                        map[scenarioKind][]string
	silentLosses                    int
	replayed, drainReinits          int // drain races: response replayed, refused
	crossReinits                    int // cross-transport resumes refused as cross_transport
	cleanDelivered, falseReinits    int
	afterCleanReinits, afterReplays int
	reasons                         map[scenarioKind]map[string]int // reasons of the refusals
	statuses                        map[int]int                     // every resume's HTTP status
	errs                            []string
}

func newReplicaTally() *replicaTally {
	tl := &replicaTally{played: map[scenarioKind]int{}, sessions: map[scenarioKind][]string{}, reasons: map[scenarioKind]map[string]int{}, statuses: map[int]int{}}
	for _, k := range scenarioKinds {
		tl.reasons[k] = map[string]int{}
	}
	return tl
}

func (tl *replicaTally) add(r scenarioResult) {
	if r.err != nil {
		tl.errs = append(tl.errs, r.err.Error())
		if r.resume.status == 0 {
			return
		}
	}
	res := r.resume
	tl.played[r.kind]++
	tl.sessions[r.kind] = append(tl.sessions[r.kind], r.session)
	tl.statuses[res.status]++
	if res.reinit() {
		tl.reasons[r.kind][res.reason]++
	}
	if res.silentLoss() && r.kind != afterCleanEnd {
		tl.silentLosses++
	}
	switch r.kind {
	case drainRace:
		if res.delivered {
			tl.replayed++
		}
		if res.reinit() {
			tl.drainReinits++
		}
	case cleanResume:
		if res.delivered {
			tl.cleanDelivered++
		}
		if res.reinit() {
			tl.falseReinits++
		}
	case crossTransport:
		if res.reinit() && res.reason == "cross_transport" {
			tl.crossReinits++
		}
	case afterCleanEnd:
		if res.reinit() {
			tl.afterCleanReinits++
		}
		if res.delivered {
			tl.afterReplays++
		}
	}
}

// combo is one row of TestReplicas.
type combo struct {
	front    front.Policy
	unacked  string // unacked_cursor
	unknown  string // unknown_cursor
	replicas int
}

func (c combo) String() string {
	return fmt.Sprintf("%d/%s/%s/%s", c.replicas, c.front, c.unacked, c.unknown)
}

// line is the combination's summary line; toolRuns counts search_index's
// runs, the drain races' tool.
func (c combo) line(tl *replicaTally, toolRuns int) string {
	perCall := 0.0
	if n := tl.played[drainRace]; n > 0 {
		perCall = float64(toolRuns) / float64(n)
	}
	return fmt.Sprintf("scenario=replicas front=%s unacked_cursor=%s unknown_cursor=%s replicas=%d drain_races=%d silent_losses=%d replayed=%d reinits=%d cross_transport_reinit=%d clean_resumes=%d false_reinits=%d tool_runs_per_call=%.2f after_clean_end=%d after_clean_end_reinits=%d",
		c.front, c.unacked, c.unknown, c.replicas, tl.played[drainRace], tl.silentLosses, tl.replayed, tl.drainReinits,
		tl.crossReinits, tl.played[cleanResume], tl.falseReinits, perCall, tl.played[afterCleanEnd], tl.afterCleanReinits)
}

// reconnectingTransport makes every resume (a request with Last-Event-ID)
// open a new connection, as a client reconnecting after a cut does; before
// it, it calls beforeResume if set.
type reconnectingTransport struct {
	base         *http.Transport
	beforeResume func()
}

func (rt reconnectingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Last-Event-ID") != "" {
		if rt.beforeResume != nil {
			rt.beforeResume()
		}
		rt.base.CloseIdleConnections()
	}
	return rt.base.RoundTrip(r)
}

// pluginConfigWith returns envoy/plugin-config/envoy.json (what envoy.yaml
// embeds) with the given keys set; a nil value removes the key, so the
// plugin's default applies.
func pluginConfigWith(t *testing.T, keys map[string]any) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "envoy", "plugin-config", "envoy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for k, v := range keys {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = v
		}
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// startReplicas starts n replicas behind a front with the given plugin
// configuration keys, stopped when the test ends.
func startReplicas(t *testing.T, n int, p front.Policy, keys map[string]any) *Replicas {
	t.Helper()
	rs, err := StartReplicas(context.Background(), ReplicaOptions{
		Wasm:         pluginWasm(t),
		PluginConfig: pluginConfigWith(t, keys),
		Replicas:     n,
		Front:        p,
		Upstream:     dualstack.Options{FirstEventID: seedFirstEventID},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rs.Close)
	return rs
}

// playScenarios plays kinds concurrently (workers at a time), each scenario
// as its own client with its own connections, and tallies them.
// beforeResume, if set, runs before every resume.
func playScenarios(rs *Replicas, kinds []scenarioKind, workers int, beforeResume func()) *replicaTally {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tl := newReplicaTally()
	var mu sync.Mutex
	jobs := make(chan scenarioKind)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := range jobs {
				c := newScenarioClient(rs, beforeResume)
				r := k.play(ctx, c)
				c.close()
				mu.Lock()
				tl.add(r)
				mu.Unlock()
			}
		})
	}
	for _, k := range kinds {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	return tl
}

// interleaved returns n[k] scenarios of each kind, interleaved.
func interleaved(n map[scenarioKind]int) []scenarioKind {
	var out []scenarioKind
	for more := true; more; {
		more = false
		for _, k := range scenarioKinds {
			if n[k] > 0 {
				out = append(out, k)
				n[k]--
				more = true
			}
		}
	}
	return out
}

// placements tells, per Streamable HTTP session, which replica served its
// tools/call and which its resume (GET /mcp), and checks that under
// session_hash every request that carried a session went to one replica.
type placements struct {
	call, resume map[string]int
}

func placementsOf(t *testing.T, rs *Replicas, p front.Policy) placements {
	t.Helper()
	pl := placements{call: map[string]int{}, resume: map[string]int{}}
	first := map[string]int{}
	for _, x := range rs.Front.Placements() {
		if x.Session == "" {
			continue
		}
		if b, ok := first[x.Session]; !ok {
			first[x.Session] = x.Backend
		} else if p == front.SessionHash && b != x.Backend {
			t.Errorf("session %s went to replicas %d and %d under session_hash", x.Session, b, x.Backend)
		}
		switch {
		case x.Method == http.MethodPost && x.Path == "/mcp":
			pl.call[x.Session] = x.Backend
		case x.Method == http.MethodGet && x.Path == "/mcp":
			pl.resume[x.Session] = x.Backend
		}
	}
	return pl
}

// elsewhere counts the sessions whose resume reached another replica than
// their call.
func (pl placements) elsewhere(sessions []string) int {
	n := 0
	for _, s := range sessions {
		if c, ok := pl.call[s]; ok && c != pl.resume[s] {
			n++
		}
	}
	return n
}

// checkTopology logs what failed on the way and fails the test on a
// scenario that could not be played, a resume answered neither 200 nor
// 404, or a plugin that trapped.
func checkTopology(t *testing.T, rs *Replicas, tl *replicaTally) {
	t.Helper()
	failures := rs.Failures()
	if len(failures) > 0 {
		t.Logf("failures in the topology: %q", failures)
	}
	for _, f := range failures {
		if strings.Contains(f, wasmhost.EndHostFailure.String()) {
			t.Errorf("a replica's plugin failed: %s", f)
		}
	}
	if len(tl.errs) > 0 {
		t.Errorf("%d scenario(s) failed, e.g. %s", len(tl.errs), tl.errs[0])
	}
	for status, n := range tl.statuses {
		if status != http.StatusOK && status != http.StatusNotFound {
			t.Errorf("%d resume(s) answered %d: %v", n, status, tl.statuses)
		}
	}
}

// TestReplicas plays, through guard replicas behind a front, for each front
// policy, unacked_cursor policy and unknown_cursor policy, on 3 replicas and
// on 1 (the control), what clients really do: drain races, clean resumes
// (cut before the response, resumed with the last notification's ID),
// cross-transport resumes (the seed), and apart from them the artificial
// resume with a response's ID after a clean end. It prints one line per
// combination and checks, on every row: no silent loss; every
// cross-transport resume re-initialized; no clean resume refused; under
// rewind every drain race replayed and its tool run once; under reinit
// every drain race refused at once, and a resume after a clean end refused
// exactly when it reached a replica without the stream's watermark.
func TestReplicas(t *testing.T) {
	skipExternal(t, "guard replicas, each its own embedded host and shared data, behind a test front")
	var (
		mu    sync.Mutex
		lines = map[string]string{}
		order []string
	)
	t.Run("rows", func(t *testing.T) {
		for _, replicas := range []int{3, 1} {
			for _, p := range []front.Policy{front.RoundRobin, front.SessionHash} {
				for _, unacked := range []string{"rewind", "reinit"} {
					for _, unknown := range []string{"forward", "reinit"} {
						c := combo{front: p, unacked: unacked, unknown: unknown, replicas: replicas}
						order = append(order, c.String())
						t.Run(c.String(), func(t *testing.T) {
							t.Parallel()
							line := playReplicas(t, c)
							mu.Lock()
							lines[c.String()] = line
							mu.Unlock()
						})
					}
				}
			}
		}
	})
	var out []string
	for _, k := range order {
		out = append(out, lines[k])
	}
	t.Log("\n" + strings.Join(out, "\n"))
}

// playReplicas plays one combination of TestReplicas, prints and returns
// its line, and checks it.
func playReplicas(t *testing.T, c combo) string {
	rs := startReplicas(t, c.replicas, c.front, map[string]any{"unacked_cursor": c.unacked, "unknown_cursor": c.unknown})
	want := map[scenarioKind]int{}
	for k, n := range replicaScenarios[c.replicas] {
		if testing.Short() {
			n = max(2, n/10)
		}
		want[k] = n
	}
	start := time.Now()
	tl := playScenarios(rs, interleaved(copyCounts(want)), replicaWorkers, nil)
	runs := rs.Upstream.ToolRuns(dualstack.ToolSearchIndex)
	line := c.line(tl, runs)
	fmt.Println(line)
	pl := placementsOf(t, rs, c.front)
	drainElsewhere, cleanElsewhere, afterElsewhere := pl.elsewhere(tl.sessions[drainRace]), pl.elsewhere(tl.sessions[cleanResume]), pl.elsewhere(tl.sessions[afterCleanEnd])
	cs := counters(rs.Counters())
	t.Logf("%v in %s; resumes on another replica than the call: drain races %d, clean resumes %d, after a clean end %d; refusals by reason %v; resume statuses %v; counters: %s",
		c, time.Since(start).Round(time.Millisecond), drainElsewhere, cleanElsewhere, afterElsewhere, tl.reasons, tl.statuses, cs)
	checkTopology(t, rs, tl)
	for _, k := range scenarioKinds {
		if tl.played[k] != want[k] {
			t.Fatalf("played %d %v scenarios, want %d", tl.played[k], k, want[k])
		}
	}
	drains := tl.played[drainRace]

	if tl.silentLosses != 0 {
		t.Errorf("%d silent losses, want 0", tl.silentLosses)
	}
	if tl.crossReinits != tl.played[crossTransport] {
		t.Errorf("%d of %d cross-transport resumes re-initialized (cross_transport), want every one", tl.crossReinits, tl.played[crossTransport])
	}
	// A clean resume's cursor is a notification's: a minting guard knows it
	// names no response, whatever replica it reaches and whatever
	// unknown_cursor says.
	if tl.falseReinits != 0 || tl.cleanDelivered != tl.played[cleanResume] {
		t.Errorf("clean resumes: %d refused, %d of %d delivered (%d on another replica than their call); want none refused, every one delivered",
			tl.falseReinits, tl.cleanDelivered, tl.played[cleanResume], cleanElsewhere)
	}
	switch c.unacked {
	case "rewind":
		if tl.replayed != drains || runs != drains {
			t.Errorf("rewind: %d of %d drain races replayed, search_index ran %d times; want every one replayed and one run per call", tl.replayed, drains, runs)
		}
		if tl.afterCleanReinits != 0 {
			t.Errorf("rewind: %d resumes after a clean end refused, want none (the response is replayed, a duplicate the client ignores)", tl.afterCleanReinits)
		}
	case "reinit":
		if tl.drainReinits != drains || tl.reasons[drainRace]["drain_race"] != drains || runs != 2*drains {
			t.Errorf("reinit: %d of %d drain races refused (%d as drain_race), search_index ran %d times; want every one refused as drain_race and run again on a new session (%d runs)",
				tl.drainReinits, drains, tl.reasons[drainRace]["drain_race"], runs, 2*drains)
		}
		// After a clean end the replica that saw the stream knows it was
		// acknowledged; another one has only the cursor, which says
		// "response": a drain race.
		if tl.afterCleanReinits != afterElsewhere {
			t.Errorf("reinit: %d resumes after a clean end refused, want the %d that reached another replica", tl.afterCleanReinits, afterElsewhere)
		}
	}
	if c.replicas > 1 && c.front == front.RoundRobin {
		if drainElsewhere == 0 || drainElsewhere == drains {
			t.Errorf("round_robin: %d of %d drain-race resumes reached another replica: the front did not spread the resumes", drainElsewhere, drains)
		}
	} else if drainElsewhere+cleanElsewhere+afterElsewhere != 0 {
		t.Errorf("%v: %d resumes reached another replica than their call, want none", c, drainElsewhere+cleanElsewhere+afterElsewhere)
	}
	// A replica that never saw the stream decides from the cursor alone: the
	// drain races and the resumes after a clean end that reached one.
	if got, want := cs.get("drain_race_from_cursor_total"), int64(drainElsewhere+afterElsewhere); got != want {
		t.Errorf("drain_race_from_cursor_total %d, want %d (drain races and resumes after a clean end on another replica than their call)", got, want)
	}
	return line
}

// copyCounts copies n.
func copyCounts(n map[scenarioKind]int) map[scenarioKind]int {
	out := make(map[scenarioKind]int, len(n))
	for k, v := range n {
		out[k] = v
	}
	return out
}

// holdAll returns a beforeResume hook that stops every scenario before its
// resume until n arrived there, then calls between once and lets them go on.
func holdAll(t *testing.T, n int, between func()) (hook func(), wait func()) {
	var mu sync.Mutex
	arrived := 0
	all, release := make(chan struct{}), make(chan struct{})
	hook = func() {
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		<-release
	}
	wait = func() {
		select {
		case <-all:
		case <-time.After(2 * time.Minute):
			close(release)
			t.Fatalf("only %d of %d scenarios reached their resume", arrived, n)
		}
		between()
		close(release)
	}
	return hook, wait
}

// TestReplicaRestart restarts every replica (an Envoy restart or a plugin
// upgrade: fresh VMs, empty shared data) between streams and their resumes,
// under the default unacked_cursor policy: the drain races are caught from
// the cursor and replayed, clean resumes are forwarded (under either
// unknown_cursor policy: a minting guard knows a plain cursor names no
// response), cross-transport resumes are refused; nothing is lost
// silently, and new sessions are guarded as before.
func TestReplicaRestart(t *testing.T) {
	skipExternal(t, "restarts the embedded replicas")
	const each = 8
	for _, unknown := range []string{"forward", "reinit"} {
		t.Run(unknown, func(t *testing.T) {
			rs := startReplicas(t, 3, front.SessionHash, map[string]any{"unacked_cursor": nil, "unknown_cursor": unknown})
			kinds := interleaved(map[scenarioKind]int{drainRace: each, cleanResume: each, crossTransport: each})
			var before counters
			hook, wait := holdAll(t, len(kinds), func() {
				before = counters(rs.Counters())
				if err := rs.RestartAll(context.Background()); err != nil {
					t.Error(err)
				}
			})
			done := make(chan *replicaTally)
			go func() { done <- playScenarios(rs, kinds, len(kinds), hook) }()
			wait()
			tl := <-done
			after := counters(rs.Counters())
			t.Logf("refusals by reason %v; resume statuses %v; counters before the restart: %s; of the new VMs: %s", tl.reasons, tl.statuses, before, after)
			checkTopology(t, rs, tl)
			fmt.Printf("scenario=replica_restart unacked_cursor=default unknown_cursor=%s replicas=%d drain_races=%d replayed=%d silent_losses=%d cross_transport_reinit=%d clean_resumes=%d false_reinits=%d drain_race_from_cursor=%d errors=%d\n",
				unknown, len(rs.Guards), tl.played[drainRace], tl.replayed, tl.silentLosses, tl.crossReinits, tl.played[cleanResume], tl.falseReinits, after.get("drain_race_from_cursor_total"), len(tl.errs))

			if before.get("events_tagged_total") == 0 || after.reinits() != int64(tl.crossReinits+tl.falseReinits) {
				t.Errorf("counters: events tagged before the restart %d, re-initializations counted by the new VMs %d; want > 0 and %d (the new VMs count from zero)",
					before.get("events_tagged_total"), after.reinits(), tl.crossReinits+tl.falseReinits)
			}
			if tl.silentLosses != 0 || tl.crossReinits != each {
				t.Errorf("after the restart: %d silent losses, %d of %d cross-transport resumes refused; want 0 and all", tl.silentLosses, tl.crossReinits, each)
			}
			if tl.replayed != each || after.get("drain_race_from_cursor_total") != each {
				t.Errorf("after the restart: %d of %d drain races replayed, %d decided from the cursor; want all, from the cursor (the watermarks are gone)",
					tl.replayed, each, after.get("drain_race_from_cursor_total"))
			}
			if tl.falseReinits != 0 || tl.cleanDelivered != each {
				t.Errorf("after the restart: %d clean resumes refused, %d of %d delivered; want none refused, every one delivered", tl.falseReinits, tl.cleanDelivered, each)
			}

			// The restarted tier guards new sessions as before.
			again := playScenarios(rs, []scenarioKind{drainRace, cleanResume, drainRace, cleanResume}, 2, nil)
			if len(again.errs) > 0 || again.replayed != 2 || again.cleanDelivered != 2 || again.silentLosses != 0 {
				t.Errorf("after the restart, new sessions: errors %v, %d drain races replayed, %d clean resumes delivered, %d silent losses; want 2, 2, 0",
					again.errs, again.replayed, again.cleanDelivered, again.silentLosses)
			}
			if slices.ContainsFunc(rs.Guards, func(g *Guard) bool { return g.Restarts() != 1 }) {
				t.Error("not every replica was restarted exactly once")
			}
		})
	}
}

// floodMaxSessions is the guard's max_sessions in TestReplicaFlood: small,
// so that a flood of new sessions evicts the victims' watermarks.
const floodMaxSessions = 8

// floodSessions is how many new sessions flood it. Each evicts the older of
// its two candidate slots only, so a flood of 4 × max_sessions once left the
// victim's record in place (seen in one make test run of about ten);
// 16 × passed 10 runs of 10.
const floodSessions = 16 * floodMaxSessions

// TestReplicaFlood: a victim's stream is cut (a drain race, and a clean
// resume), then a flood of new sessions (many times max_sessions) evicts
// its watermarks before it resumes: the drain race is decided from the
// cursor and replayed, the clean resume is forwarded; nothing is lost
// silently.
func TestReplicaFlood(t *testing.T) {
	skipExternal(t, "a small max_sessions in the embedded host")
	rs := startReplicas(t, 1, front.RoundRobin, map[string]any{"unacked_cursor": nil, "max_sessions": floodMaxSessions})
	kinds := []scenarioKind{drainRace, cleanResume}
	hook, wait := holdAll(t, len(kinds), func() {
		c := newScenarioClient(rs, nil)
		defer c.close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for i := range floodSessions {
			if _, err := c.initialize(ctx); err != nil {
				t.Errorf("flood session %d: %v", i, err)
				return
			}
		}
	})
	before := counters(rs.Counters())
	done := make(chan *replicaTally)
	go func() { done <- playScenarios(rs, kinds, len(kinds), hook) }()
	wait()
	tl := <-done
	delta := counters(rs.Counters()).since(before)
	t.Logf("refusals by reason %v; resume statuses %v; counters: %s", tl.reasons, tl.statuses, delta)
	checkTopology(t, rs, tl)
	fmt.Printf("scenario=replica_flood max_sessions=%d flood_sessions=%d drain_races=%d replayed=%d clean_resumes=%d delivered=%d silent_losses=%d drain_race_from_cursor=%d\n",
		floodMaxSessions, floodSessions, tl.played[drainRace], tl.replayed, tl.played[cleanResume], tl.cleanDelivered, tl.silentLosses, delta.get("drain_race_from_cursor_total"))
	if tl.silentLosses != 0 || tl.replayed != 1 || tl.cleanDelivered != 1 {
		t.Errorf("after the flood: %d silent losses, %d drain race replayed, %d clean resume delivered; want 0, 1, 1", tl.silentLosses, tl.replayed, tl.cleanDelivered)
	}
	if got := delta.get("drain_race_from_cursor_total"); got != 1 {
		t.Errorf("drain_race_from_cursor_total grew by %d, want 1: the flood evicted the victim's watermark, only its cursor is left", got)
	}
}
