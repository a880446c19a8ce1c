package bench

import (
	"context"
	"fmt"
	"strconv"

	"github.com/mcp-resume-guard/mcp-resume-guard/cursor"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
	"github.com/mcp-resume-guard/mcp-resume-guard/sse"
)

// population is the set of sessions the request and resume benchmarks use:
// each one had a short stream whose last event, a tools/call result, was
// delivered, so the guard holds a watermark record for it.
type population struct {
	sessions []string
	cursors  []string // tagged cursor of each session's last event
	streams  []wasmhost.Exchange
}

func newPopulation(n int) *population {
	p := &population{}
	for i := range n {
		s := Session(i)
		first := 100 + 10*i
		body := appendNotification(nil, first)
		body = appendResponse(body, first+1)
		p.sessions = append(p.sessions, s)
		p.cursors = append(p.cursors, "http:e-"+strconv.Itoa(first+1))
		p.streams = append(p.streams, Stream(s, [][]byte{body}))
	}
	return p
}

// seed runs every session's stream through r.
func (p *population) seed(r *runner) error {
	for i := range p.streams {
		if err := r.run(&p.streams[i]); err != nil {
			return err
		}
	}
	return nil
}

// cycle returns a workload that runs the exchanges xs round-robin, each
// counting unit units.
func cycle(r *runner, xs []wasmhost.Exchange, unit int64) workload {
	next := 0
	return func(n int) (int64, error) {
		for range n {
			if err := r.run(&xs[next]); err != nil {
				return 0, err
			}
			next = (next + 1) % len(xs)
		}
		return int64(n) * unit, nil
	}
}

// requestWorkload runs requests with a session and no cursor.
func requestWorkload(r *runner, p *population) workload {
	xs := make([]wasmhost.Exchange, len(p.sessions))
	for i, s := range p.sessions {
		xs[i] = Request(s)
	}
	return cycle(r, xs, 1)
}

// resumeWorkload runs resumes with each session's tagged cursor: a
// shared-data lookup, a normal decision and the cursor forwarded untagged.
func resumeWorkload(r *runner, p *population) workload {
	xs := make([]wasmhost.Exchange, len(p.sessions))
	for i, s := range p.sessions {
		xs[i] = Resume(s, p.cursors[i])
	}
	return cycle(r, xs, 1)
}

// sseWorkload runs whole event streams of the given body; units are bytes.
func sseWorkload(r *runner, p *population, body [][]byte) workload {
	xs := make([]wasmhost.Exchange, len(p.sessions))
	var size int64
	for _, c := range body {
		size += int64(len(c))
	}
	for i, s := range p.sessions {
		xs[i] = Stream(s, body)
	}
	return cycle(r, xs, size)
}

// unguardedWorkload runs requests on a path no route matches.
func unguardedWorkload(r *runner, p *population) workload {
	xs := make([]wasmhost.Exchange, len(p.sessions))
	for i, s := range p.sessions {
		xs[i] = Unguarded(s)
	}
	return cycle(r, xs, 1)
}

// checkCursor verifies that a plugin really did its work in the benchmark
// (a benchmark of a misconfigured guard would measure nothing): it forwarded
// the resume's cursor untagged. The plugin edits x's headers in place.
func checkCursor(name string, h *wasmhost.Host, x wasmhost.Exchange, wantCursor string) error {
	res, err := h.Simulate(x)
	if err != nil {
		return err
	}
	if got := res.Request.Value("last-event-id"); got != wantCursor {
		return fmt.Errorf("bench: the %s forwarded last-event-id %q, want %q (is it configured?)", name, got, wantCursor)
	}
	return nil
}

// overheads measures the guard against the baselines.
func overheads(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	guard, err := newHost(ctx, w.Guard, GuardConfig, 1)
	if err != nil {
		return err
	}
	defer guard.Close(ctx)
	pass, err := newHost(ctx, w.Passthrough, "", 1)
	if err != nil {
		return err
	}
	defer pass.Close(ctx)
	cp, err := newHost(ctx, w.PassthroughCopy, "", 1)
	if err != nil {
		return err
	}
	defer cp.Close(ctx)
	fl, err := newHost(ctx, w.Floor, "", 1)
	if err != nil {
		return err
	}
	defer fl.Close(ctx)
	pfl, err := newHost(ctx, w.PathFloor, "", 1)
	if err != nil {
		return err
	}
	defer pfl.Close(ctx)

	pop := newPopulation(o.Sessions)
	g, ps, c, f := &runner{h: guard}, &runner{h: pass}, &runner{h: cp}, &runner{h: fl}
	for _, r := range []*runner{g, ps, c, f} {
		if err := pop.seed(r); err != nil {
			return err
		}
	}
	untagged := pop.cursors[0][len("http:"):]
	if err := checkCursor("guard", guard, Resume(pop.sessions[0], pop.cursors[0]), untagged); err != nil {
		return err
	}
	if err := checkCursor("floor", fl, Resume(pop.sessions[0], pop.cursors[0]), untagged); err != nil {
		return err
	}

	o.progress("request overhead: %d rounds of %d requests per side", o.Rounds, o.Requests)
	if rep.Request, err = interleave(requestWorkload(g, pop), requestWorkload(ps, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	o.progress("resume overhead: %d rounds of %d resumes per side", o.Rounds, o.Requests)
	if rep.Resume, err = interleave(resumeWorkload(g, pop), resumeWorkload(ps, pop), o.Requests, o.Rounds); err != nil {
		return err
	}

	o.progress("guard against the floor: %d rounds of %d requests, then resumes, per side", o.Rounds, o.Requests)
	if rep.RequestFloor, err = interleave(requestWorkload(g, pop), requestWorkload(f, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	if rep.ResumeFloor, err = interleave(resumeWorkload(g, pop), resumeWorkload(f, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	o.progress("the floor against passthrough: %d rounds of %d requests, then resumes, per side", o.Rounds, o.Requests)
	if rep.RequestFloorOverhead, err = interleave(requestWorkload(f, pop), requestWorkload(ps, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	if rep.ResumeFloorOverhead, err = interleave(resumeWorkload(f, pop), resumeWorkload(ps, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	o.progress("unguarded requests: %d rounds of %d requests per side", o.Rounds, o.Requests)
	if rep.Unguarded, err = interleave(unguardedWorkload(g, pop), unguardedWorkload(ps, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	pf := &runner{h: pfl}
	if rep.UnguardedFloor, err = interleave(unguardedWorkload(g, pop), unguardedWorkload(pf, pop), o.Requests, o.Rounds); err != nil {
		return err
	}
	if rep.UnguardedFloorOverhead, err = interleave(unguardedWorkload(pf, pop), unguardedWorkload(ps, pop), o.Requests, o.Rounds); err != nil {
		return err
	}

	rep.Sessions, rep.FullSessions = o.Sessions, o.FullSessions
	if o.FullSessions > 0 {
		full := newPopulation(o.FullSessions)
		gf, pf := &runner{h: guard}, &runner{h: pass}
		for _, r := range []*runner{gf, pf} {
			if err := full.seed(r); err != nil {
				return err
			}
		}
		o.progress("request and resume overhead with %d sessions", o.FullSessions)
		if rep.RequestFull, err = interleave(requestWorkload(gf, full), requestWorkload(pf, full), o.Requests, o.Rounds); err != nil {
			return err
		}
		if rep.ResumeFull, err = interleave(resumeWorkload(gf, full), resumeWorkload(pf, full), o.Requests, o.Rounds); err != nil {
			return err
		}
	}

	stream := Chunks(SSEStream(o.StreamBytes, 1000, 1), ChunkBytes)
	rep.StreamBytes, rep.StreamChunks = o.StreamBytes, len(stream)
	o.progress("SSE throughput: %d rounds of %d streams of %d KiB per side", o.Rounds, o.Streams, o.StreamBytes>>10)
	if rep.SSE, err = interleave(sseWorkload(g, pop, stream), sseWorkload(c, pop, stream), o.Streams, o.Rounds); err != nil {
		return err
	}
	if n, _ := guard.Metric("mcp_resume_guard_events_tagged_total"); n == 0 {
		return fmt.Errorf("bench: the guard tagged no events in the SSE benchmark")
	}
	if rep.SSEFloor, err = interleave(sseWorkload(g, pop, stream), sseWorkload(f, pop, stream), o.Streams, o.Rounds); err != nil {
		return err
	}
	if rep.SSEFloorOverhead, err = interleave(sseWorkload(f, pop, stream), sseWorkload(c, pop, stream), o.Streams, o.Rounds); err != nil {
		return err
	}

	rep.EventIDBytesAdded = bytesAddedPerEventID(stream)
	o.progress("native rewriter: %d rounds", o.Rounds)
	if rep.Rewriter, err = interleave(rewriteWorkload(stream, true), copyWorkload(stream), o.Streams*4, o.Rounds); err != nil {
		return err
	}
	rep.RewriterFull, err = interleave(rewriteWorkload(stream, false), copyWorkload(stream), o.Streams*4, o.Rounds)
	return err
}

// bytesAddedPerEventID is what the plugin's rewriter (minting) adds to the
// stream, per event ID it tags: the tag, and for responses the kind and the
// previous ID.
func bytesAddedPerEventID(stream [][]byte) float64 {
	rw := sse.NewRewriter(cursor.TransportHTTP, 0)
	rw.ClassifyLastIDOnly(true)
	rw.SetMint(true)
	var in, out, ids int
	var dst []byte
	for i, c := range stream {
		dst, _ = rw.Rewrite(dst[:0], c, i == len(stream)-1)
		in, out, ids = in+len(c), out+len(dst), ids+rw.Tagged()
	}
	if ids == 0 {
		return 0
	}
	return float64(out-in) / float64(ids)
}

// rewriteWorkload runs the native SSE rewriter over the stream; units are
// bytes. lastIDOnly is the mode the plugin runs it in (only the last event
// with an ID of each chunk is classified for its tail; minting classifies
// every event with an ID); without it every event is.
func rewriteWorkload(stream [][]byte, lastIDOnly bool) workload {
	rw := sse.NewRewriter(cursor.TransportHTTP, 0)
	rw.ClassifyLastIDOnly(lastIDOnly)
	rw.SetMint(true)
	dst := make([]byte, 0, 2*ChunkBytes)
	var size int64
	for _, c := range stream {
		size += int64(len(c))
	}
	return func(n int) (int64, error) {
		for range n {
			rw.Reset(cursor.TransportHTTP, 0)
			for i, c := range stream {
				dst, _ = rw.Rewrite(dst[:0], c, i == len(stream)-1)
			}
		}
		return int64(n) * size, nil
	}
}

// copyWorkload copies the same chunks into the same kind of buffer.
func copyWorkload(stream [][]byte) workload {
	dst := make([]byte, 0, 2*ChunkBytes)
	var size int64
	for _, c := range stream {
		size += int64(len(c))
	}
	return func(n int) (int64, error) {
		for range n {
			for _, c := range stream {
				dst = append(dst[:0], c...)
			}
		}
		sink = dst
		return int64(n) * size, nil
	}
}

var sink []byte

// repeat runs the same exchange n times.
func repeat(r *runner, x wasmhost.Exchange) workload {
	return func(n int) (int64, error) {
		for range n {
			if err := r.run(&x); err != nil {
				return 0, err
			}
		}
		return int64(n), nil
	}
}
