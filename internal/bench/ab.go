package bench

import (
	"context"
	"fmt"
	"io"
)

// ABReport compares two builds of the guard on the same workloads, A/B
// interleaved: each ratio is A's cost per unit divided by B's (below 1: A is
// cheaper).
type ABReport struct {
	Request, Resume, Unguarded, SSE Pair
}

// CompareBuilds runs the request, resume, unguarded and SSE workloads
// through guard builds a and b, both with GuardConfig, A/B interleaved.
func CompareBuilds(ctx context.Context, a, b []byte, o Options) (*ABReport, error) {
	ha, err := newHost(ctx, a, GuardConfig, 1)
	if err != nil {
		return nil, err
	}
	defer ha.Close(ctx)
	hb, err := newHost(ctx, b, GuardConfig, 1)
	if err != nil {
		return nil, err
	}
	defer hb.Close(ctx)
	pop := newPopulation(o.Sessions)
	ra, rb := &runner{h: ha}, &runner{h: hb}
	for _, r := range []*runner{ra, rb} {
		if err := pop.seed(r); err != nil {
			return nil, err
		}
	}
	rep := &ABReport{}
	stream := Chunks(SSEStream(o.StreamBytes, 1000, 1), ChunkBytes)
	for _, c := range []struct {
		name string
		dst  *Pair
		a, b workload
		n    int
	}{
		{"request", &rep.Request, requestWorkload(ra, pop), requestWorkload(rb, pop), o.Requests},
		{"resume", &rep.Resume, resumeWorkload(ra, pop), resumeWorkload(rb, pop), o.Requests},
		{"unguarded", &rep.Unguarded, unguardedWorkload(ra, pop), unguardedWorkload(rb, pop), o.Requests},
		{"SSE", &rep.SSE, sseWorkload(ra, pop, stream), sseWorkload(rb, pop, stream), o.Streams},
	} {
		o.progress("A/B %s: %d rounds", c.name, o.Rounds)
		if *c.dst, err = interleave(c.a, c.b, c.n, o.Rounds); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// WriteText writes one line per workload: A and B per unit, and A/B.
func (r *ABReport) WriteText(w io.Writer, nameA, nameB string) error {
	for _, c := range []struct {
		name, unit string
		p          Pair
	}{
		{"request", "ns", r.Request}, {"resume", "ns", r.Resume},
		{"unguarded", "ns", r.Unguarded}, {"SSE", "ns/byte", r.SSE},
	} {
		if _, err := fmt.Fprintf(w, "A/B %-9s %s %.2f %s, %s %.2f %s -> A/B %.3f (rounds %s)\n",
			c.name, nameA, c.p.A(), c.unit, nameB, c.p.B(), c.unit, c.p.Ratio(), rounds(c.p.Rounds)); err != nil {
			return err
		}
	}
	return nil
}
