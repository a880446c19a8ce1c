package clientoracle

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// fuzzN numbers the inputs: each gets its own session and principal, so a
// refusal (which tombstones a session) cannot spill into the next input.
var fuzzN atomic.Int64

// FuzzReaders is TestReadersAgree on arbitrary upstream bytes, for the
// WHATWG model and the Go SDK's client (eventsource-parser runs in node,
// once per test run, so only the corpus test asks it): cut into chunks at
// points drawn from cuts, through the guard with minting as mint says, on a
// legacy route when legacy. The known-defect lists apply as in the corpus
// test.
func FuzzReaders(f *testing.F) {
	// One guard per fuzzing process, started before the inputs: starting
	// it takes seconds, and the fuzzer gives each input ten.
	g := newGuard(f)
	for _, d := range knownDefects {
		f.Add([]byte(d.repro), uint64(1), d.reproMint, false)
	}
	// An ID of white space, unterminated: the Go SDK's reader trims the
	// guard's "http: " to "http:", which must go upstream as no cursor.
	f.Add([]byte("id:  "), uint64(12), true, false)
	for i := range 40 {
		c := generate(corpusSeed, i)
		f.Add(c.Body(), uint64(i), c.Mint, c.Transport == "sse")
	}
	f.Fuzz(func(t *testing.T, body []byte, cuts uint64, mint, legacy bool) {
		if len(body) > 64<<10 {
			return // the guard holds at most max_line_bytes; longer inputs only slow the fuzzer
		}
		c := &Case{Name: "fuzz", Transport: "http", Mint: mint, Traits: map[string]bool{}}
		if legacy {
			c.Transport = "sse"
		}
		rng := rand.New(rand.NewPCG(cuts, 0))
		var at []int
		for n := rng.IntN(5); n > 0 && len(body) > 1; n-- {
			at = append(at, 1+rng.IntN(len(body)-1))
		}
		c.Chunks = cutAt(body, at)
		n := int(fuzzN.Add(1))
		out, err := g.run(c, n)
		if err != nil {
			t.Fatal(err)
		}
		gd := join(out)
		x := ids{resolve: memo(func(id string) string { return g.resume(c, n, id) }), untouched: body[overflowAt(body):]}
		for reader, diffs := range map[string][]string{
			"WHATWG": compareWHATWG(body, gd, x),
			"go-sdk": compareGo(readGo(t, c.Chunks), readGo(t, out), x),
		} {
			if len(diffs) > 0 && knownDefectOf(body, mint, reader) == "" {
				t.Errorf("%s reads the guard's bytes differently (mint %v, %s route):\n  %v\n  upstream %q\n  guard    %q", reader, mint, c.Transport, diffs, body, gd)
			}
		}
	})
}
