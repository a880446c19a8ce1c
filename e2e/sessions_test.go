package e2e

import (
	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack/seedclient"
)

// checkDrainRaceRefused asserts the outcome of a drain race the guard must
// catch: the resume is answered with the forced re-initialization, the
// client retries on a new session and gets its result, and the tool ran
// exactly twice (the cut call and the retry), with no silent loss.
func checkDrainRaceRefused(t *testing.T, rep *seedclient.Report, delta counters) {
	t.Helper()
	if rep.ResumeStatus != 404 || cursor.ReinitReason([]byte(rep.ResumeBody)) != "drain_race" {
		t.Fatalf("resume answered %d (%s), want the drain_race re-initialization", rep.ResumeStatus, rep.ResumeBody)
	}
	if n := delta.get("drain_race_detected_total"); n < 1 {
		t.Errorf("drain_race_detected_total grew by %d, want ≥ 1 (counters: %s)", n, delta)
	}
	if seedLosses(rep) != 0 || !rep.Reinitialized || !rep.RetryResultArrived {
		t.Errorf("losses %d, reinit %t, retry result %t (%s): want the result through a new session", seedLosses(rep), rep.Reinitialized, rep.RetryResultArrived, rep.RetryError)
	}
	if rep.Runs() != 2 {
		t.Errorf("search_index ran %d times, want 2 (the cut call and the retry)", rep.Runs())
	}
}

// TestDrainRaceJWTSession: the drain race on a session whose ID is the size
// of a JWT (1 KiB of visible ASCII, IDs alike in their first 37 bytes). The
// guard keys its records by a digest of the session, so any length the spec
// allows is protected.
func TestDrainRaceJWTSession(t *testing.T) {
	skipExternal(t, "only the in-process upstream can be told to mint JWT-sized session IDs")
	const idBytes = 1024
	tg := newTarget(t, targetOptions{sessionIDBytes: idBytes, config: "reinit.json"})
	rep, delta := runDrainRace(t, tg)
	summary("drain_race_jwt_session", seedLosses(rep), rep.Runs(), reinitCount(rep))
	if len(rep.SessionID) != idBytes {
		t.Fatalf("the upstream minted a %d-byte session ID, want %d", len(rep.SessionID), idBytes)
	}
	checkDrainRaceRefused(t, rep, delta)
}

// TestDrainRaceAfterFourCleanCalls: the POST stream is cut after its result,
// then the agent makes four more tool calls on the session that end cleanly
// before the client resumes. The four acknowledged tails must not push the
// one unacknowledged result out of the session's record.
func TestDrainRaceAfterFourCleanCalls(t *testing.T) {
	skipExternal(t, "unacked_cursor reinit is a different plugin configuration than envoy/envoy.yaml's (rewind)")
	tg := newTarget(t, targetOptions{config: "reinit.json"})
	rep, delta := runDrainRace(t, tg, func(c *seedclient.Config) { c.CleanCallsAfterCut = 4 })
	summary("drain_race_after_4_clean_calls", seedLosses(rep), rep.Runs(), reinitCount(rep))
	if len(rep.CleanCallEventIDs) < 4 {
		t.Fatalf("clean calls carried events %v, want four SSE answers", rep.CleanCallEventIDs)
	}
	checkDrainRaceRefused(t, rep, delta)
}
