package bench

import (
	"slices"
	"time"
)

// workload is one side of an A/B comparison: run does n operations and
// returns how many units (requests or bytes) they processed.
type workload func(n int) (units int64, err error)

// Pair is the outcome of an interleaved A/B comparison.
type Pair struct {
	// AQuads and BQuads are each side's ns per unit in each ABBA quad of
	// blocks (A, B, B, A), every round: a quad sees the same machine for
	// both sides, so a preempted block moves one quad, not the round.
	AQuads, BQuads []float64
	// Rounds are A's cost over B's over each whole round.
	Rounds []float64
}

// Ratio is A's cost over B's: the median over the quads.
func (p Pair) Ratio() float64 {
	r := make([]float64, len(p.AQuads))
	for i := range r {
		r[i] = p.AQuads[i] / p.BQuads[i]
	}
	return median(r)
}

// A is A's ns per unit, the median over the quads.
func (p Pair) A() float64 { return median(p.AQuads) }

// B is B's ns per unit, the median over the quads.
func (p Pair) B() float64 { return median(p.BQuads) }

// Measured reports whether the comparison ran.
func (p Pair) Measured() bool { return len(p.AQuads) > 0 }

// RoundRange is the lowest and highest A/B of a whole round: how much a
// round moves on this machine.
func (p Pair) RoundRange() (lo, hi float64) {
	if len(p.Rounds) == 0 {
		return 0, 0
	}
	return slices.Min(p.Rounds), slices.Max(p.Rounds)
}

// add appends a quad (or a round's only one) of a ns and au units against b
// ns and bu units.
func (p *Pair) add(s sides) {
	p.AQuads = append(p.AQuads, s.ans/float64(max(s.au, 1)))
	p.BQuads = append(p.BQuads, s.bns/float64(max(s.bu, 1)))
}

// blocksPerRound is how many turns each side of interleave takes per round.
const blocksPerRound = 40

// interleave runs a and b alternately, n operations each per round, rounds
// times after one warm-up round that is not counted. Within a round the
// two sides take turns in blocks of about n/blocksPerRound operations, in
// ABBA order: on a shared machine whose speed drifts over tens of
// milliseconds, short alternating blocks see the same machine, and the
// median over the quads of blocks ignores the blocks a preemption hit.
func interleave(a, b workload, n, rounds int) (Pair, error) {
	var p Pair
	block := max(n/blocksPerRound, 1)
	timeIt := func(w workload, ops int) (float64, int64, error) {
		start := clock()
		u, err := w(ops)
		return float64(clock().Sub(start).Nanoseconds()), u, err
	}
	for r := -1; r < rounds; r++ {
		var ab sides // the round
		var quad sides
		for done, i := 0, 0; done < n; i++ {
			ops := min(block, n-done)
			done += ops
			first, second := a, b
			if i%2 == 1 {
				first, second = b, a
			}
			t1, u1, err := timeIt(first, ops)
			if err != nil {
				return p, err
			}
			t2, u2, err := timeIt(second, ops)
			if err != nil {
				return p, err
			}
			if i%2 == 1 {
				t1, u1, t2, u2 = t2, u2, t1, u1
			}
			ab.add(t1, u1, t2, u2)
			quad.add(t1, u1, t2, u2)
			if i%2 == 1 || done == n {
				if r >= 0 {
					p.add(quad)
				}
				quad = sides{}
			}
		}
		if r >= 0 {
			p.Rounds = append(p.Rounds, ab.ratio())
		}
	}
	return p, nil
}

// clock is interleave's clock (a test's fake one).
var clock = time.Now

// sides sums the time and units of each side.
type sides struct {
	ans, bns float64
	au, bu   int64
}

func (s *sides) add(ans float64, au int64, bns float64, bu int64) {
	s.ans, s.au, s.bns, s.bu = s.ans+ans, s.au+au, s.bns+bns, s.bu+bu
}

func (s sides) ratio() float64 {
	if s.bns == 0 || s.au == 0 {
		return 0
	}
	return (s.ans / float64(s.au)) / (s.bns / float64(s.bu))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
