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

// interleave runs a and b alternately, n operations each per round, after
// one warm-up round that is not counted. Within a round the two sides take
// turns in blocks of about n/blocksPerRound operations, in ABBA order, and
// the round's figure for each side is its total time over its total units:
// on a shared machine whose speed drifts over tens of milliseconds (this
// one's does by up to 2× within a second), a round of two long back-to-back
// runs measures the drift as much as the plugins, while short alternating
// blocks see the same machine.
func interleave(a, b workload, n, rounds int) (Pair, error) {
	var p Pair
	block := max(n/blocksPerRound, 1)
	timeIt := func(w workload, ops int, ns *float64, units *int64) error {
		start := time.Now()
		u, err := w(ops)
		*ns += float64(time.Since(start).Nanoseconds())
		*units += u
		return err
	}
	for r := -1; r < rounds; r++ {
		var ans, bns float64
		var au, bu int64
		for done, i := 0, 0; done < n; i++ {
			ops := min(block, n-done)
			done += ops
			first, second := a, b
			fns, sns, fu, su := &ans, &bns, &au, &bu
			if i%2 == 1 {
				first, second = b, a
				fns, sns, fu, su = &bns, &ans, &bu, &au
			}
			if err := timeIt(first, ops, fns, fu); err != nil {
				return p, err
			}
			if err := timeIt(second, ops, sns, su); err != nil {
				return p, err
			}
		}
		if r < 0 {
			continue // warm-up
		}
		an, bn := ans/float64(max(au, 1)), bns/float64(max(bu, 1))
		p.ANs = append(p.ANs, an)
		p.BNs = append(p.BNs, bn)
		p.Rounds = append(p.Rounds, an/bn)
	}
	return p, nil
}

// blocksPerRound is how many turns each side of interleave takes per round.
const blocksPerRound = 40

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
