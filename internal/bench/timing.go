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
	Rounds []float64 // A's cost per unit / B's, one per round
	ANs    []float64 // A's ns per unit, one per round
	BNs    []float64 // B's ns per unit, one per round
}

// Ratio is the median of the per-round ratios.
func (p Pair) Ratio() float64 { return median(p.Rounds) }

// A is A's median ns per unit.
func (p Pair) A() float64 { return median(p.ANs) }

// B is B's median ns per unit.
func (p Pair) B() float64 { return median(p.BNs) }

// interleave runs a and b alternately, n operations each per round, in
// ABBA order so that neither side always runs first, after one warm-up
// round that is not counted.
func interleave(a, b workload, n, rounds int) (Pair, error) {
	var p Pair
	timeIt := func(w workload) (float64, error) {
		start := time.Now()
		units, err := w(n)
		if err != nil {
			return 0, err
		}
		return float64(time.Since(start).Nanoseconds()) / float64(max(units, 1)), nil
	}
	for r := -1; r < rounds; r++ {
		var an, bn float64
		var err error
		if r%2 == 0 {
			if an, err = timeIt(a); err == nil {
				bn, err = timeIt(b)
			}
		} else {
			if bn, err = timeIt(b); err == nil {
				an, err = timeIt(a)
			}
		}
		if err != nil {
			return p, err
		}
		if r < 0 {
			continue // warm-up
		}
		p.ANs = append(p.ANs, an)
		p.BNs = append(p.BNs, bn)
		p.Rounds = append(p.Rounds, an/bn)
	}
	return p, nil
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
