package soak

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack/seedclient"
)

// rawSession is session i played by the project's raw client: the seed's
// legacy-to-Streamable resume, or the same-transport drain race followed by
// CallsPerSession-1 clean calls on the session. Either cuts its own stream;
// the client calls again on a new session after a forced re-initialization
// (seedclient's Retry), which is the recovery that keeps such a call from
// being lost. A silent loss (the resume accepted, the result never came) is
// lost even though seedclient then calls again.
func (r *run) rawSession(ctx context.Context, i int, seed bool) {
	cfg := seedclient.Config{
		BaseURL: r.top.frontURL, ControlURL: r.top.upstreamURL, HTTPClient: r.raw,
		// Generous: a loaded machine must not make a slow replay look lost.
		ResumeWait: 10 * time.Second, CutWait: 5 * time.Second,
		Retry: true, Query: fmt.Sprintf("soak raw %d", i),
	}
	calls := int64(1)
	play, name := seedclient.RunSeed, "seed"
	if !seed {
		cfg.CleanCallsAfterCut = r.o.CallsPerSession - 1
		calls += int64(cfg.CleanCallsAfterCut)
		play, name = seedclient.RunDrainRace, "drain race"
	}
	r.calls.Add(calls)
	defer r.done.Add(calls)
	rep, err := play(ctx, cfg)
	if err != nil {
		r.fail(fmt.Sprintf("raw session %d (%s): %v", i, name, err))
		return
	}
	r.cuts.Add(1)
	r.dups.Add(int64(rep.DuplicateResults))
	if !rep.ResultArrived && !(rep.ForcedReinit() && rep.RetryResultArrived) {
		r.loseCall(fmt.Sprintf("raw session %d (%s): %s", i, name, rep))
	}
}
