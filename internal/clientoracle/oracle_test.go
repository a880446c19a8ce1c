package clientoracle

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/whatwgsse"
)

// The corpus: corpusSize streams generated from corpusSeed (deterministic).
const (
	corpusSeed = 22 // issue 22
	corpusSize = 2400
)

// For looking into one stream: -oracle.stream runs that stream (a Go
// quoted string) instead of the corpus, -oracle.only runs the listed corpus
// cases; either logs what each reader made of it.
var (
	onlyFlag   = flag.String("oracle.only", "", "comma-separated corpus case numbers to run alone, with every reader's view logged")
	streamFlag = flag.String("oracle.stream", "", "a Go-quoted upstream stream to run instead of the corpus, with every reader's view logged")
	showFlag   = flag.String("oracle.show", "", "comma-separated corpus case numbers whose views to log in a full run")
	examples   = flag.Int("oracle.examples", 3, "examples to print per kind of difference")
	mintFlag   = flag.Bool("oracle.mint", true, "mint_cursors for -oracle.stream")
	sseFlag    = flag.Bool("oracle.sse", false, "a legacy sse route for -oracle.stream")
)

// selected returns the cases to run and whether to log every view.
func selected(t *testing.T) ([]*Case, []int, bool) {
	if *streamFlag != "" {
		// Go escapes (\n, \r, \u…) are read; quotes may be escaped or not.
		s, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.ReplaceAll(*streamFlag, `\"`, `"`), `"`, `\"`) + `"`)
		if err != nil {
			t.Fatalf("-oracle.stream: %v", err)
		}
		c := &Case{Name: "-oracle.stream", Transport: "http", Mint: *mintFlag, Chunks: [][]byte{[]byte(s)}, Traits: map[string]bool{}}
		if *sseFlag {
			c.Transport = "sse"
		}
		return []*Case{c}, []int{0}, true
	}
	var idx []int
	if *onlyFlag != "" {
		for _, f := range strings.Split(*onlyFlag, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				t.Fatalf("-oracle.only: %v", err)
			}
			idx = append(idx, n)
		}
	} else {
		for i := range corpusSize {
			idx = append(idx, i)
		}
	}
	cases := make([]*Case, len(idx))
	for k, i := range idx {
		cases[k] = generate(corpusSeed, i)
	}
	return cases, idx, *onlyFlag != ""
}

// TestReadersAgree is the differential test of issue 22: each corpus
// stream goes through the built .wasm, and each official reader (the Go
// SDK's client, the TypeScript SDK's eventsource-parser, a WHATWG model)
// must read from the guard's bytes what it reads from the upstream's, IDs
// read back through the guard.
func TestReadersAgree(t *testing.T) {
	start := time.Now()
	cases, nums, verbose := selected(t)
	// The exclusions' repros ride along (one node process per run).
	entries, repros, reproNums := reproCases()
	if verbose {
		entries, repros, reproNums = nil, nil, nil
	}
	g := newGuard(t)
	res, times := readAll(t, g, slices.Concat(cases, repros), slices.Concat(nums, reproNums), verbose)
	checkRepros(t, entries, res[len(cases):])
	res = res[:len(cases)]
	r := &report{}
	kinds, results := 0, 0
	for i, c := range cases {
		r.bytes += len(c.Body())
		kinds, results = kinds+res[i].kindsChecked, results+res[i].resultsChecked
		for _, reader := range allReaders {
			r.add(c, res[i].up, res[i].gd, reader, res[i].diffs[reader])
		}
	}
	r.finish(t)
	t.Logf("%d streams (%d bytes), 3 readers: %s, total %v; %d minted events' kinds checked (%d results)", len(cases), r.bytes, times, time.Since(start).Round(time.Millisecond), kinds, results)
	t.Logf("traits covered: %s", coverage(cases))
}

// result is one case's bytes and each reader's differences.
type result struct {
	up, gd []byte
	diffs  map[string][]string
	// kindsChecked events had their cursor's kind checked, resultsChecked
	// of them results (compareKinds).
	kindsChecked, resultsChecked int
}

// readAll runs the cases through the guard and every reader (node once for
// all of them) and compares; times says where the time went.
func readAll(t *testing.T, g *guard, cases []*Case, nums []int, verbose bool) ([]result, string) {
	t.Helper()
	start := time.Now()
	outs := make([][][]byte, len(cases))
	for i, c := range cases {
		out, err := g.run(c, nums[i])
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		outs[i] = out
	}
	guardTime := time.Since(start)
	streams := make([][][]byte, 0, 2*len(cases))
	for i, c := range cases {
		streams = append(streams, c.Chunks, outs[i])
	}
	tsStart := time.Now()
	ts := readTS(t, streams)
	tsTime := time.Since(tsStart)
	goStart := time.Now()
	gv := make([]goView, len(streams))
	parallel(len(streams), 2, func(k int) { gv[k] = readGo(t, streams[k]) })
	goTime := time.Since(goStart)

	res := make([]result, len(cases))
	for i, c := range cases {
		resolve := memo(func(id string) string { return g.resume(c, nums[i], id) })
		up, gd := c.Body(), join(outs[i])
		if verbose || slices.Contains(strings.Split(*showFlag, ","), strconv.Itoa(nums[i])) {
			t.Logf("%s\n upstream %q\n guard    %q\n WHATWG: upstream %+v\n         guard    %+v\n eventsource-parser: upstream %s\n                     guard    %s\n go-sdk: upstream %+v\n         guard    %+v",
				c.Name, up, gd, whatwgsse.Parse(up), whatwgsse.Parse(gd), jsonOf(ts[2*i]), jsonOf(ts[2*i+1]), gv[2*i], gv[2*i+1])
		}
		x := ids{resolve: resolve, untouched: up[overflowAt(up):]}
		kinds, checked, results := compareKinds(c, up, gd, func(k int, id string) string { return g.resumeElsewhere(c, nums[i], k, id) })
		res[i] = result{up: up, gd: gd, kindsChecked: checked, resultsChecked: results, diffs: map[string][]string{
			"WHATWG":             compareWHATWG(up, gd, x),
			"eventsource-parser": compareTS(ts[2*i], ts[2*i+1], x),
			"go-sdk":             compareGo(gv[2*i], gv[2*i+1], x),
			"cursor-kind":        kinds,
		}}
	}
	return res, fmt.Sprintf("guard %v, eventsource-parser (one node process) %v, go-sdk %v",
		guardTime.Round(time.Millisecond), tsTime.Round(time.Millisecond), goTime.Round(time.Millisecond))
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// memo caches a resolver's answers.
func memo(f resolver) resolver {
	m := map[string]string{}
	return func(id string) string {
		if v, ok := m[id]; ok {
			return v
		}
		v := f(id)
		m[id] = v
		return v
	}
}

// parallel runs f(0..n-1) on workers goroutines.
func parallel(n, workers int, f func(int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for k := range next {
				f(k)
			}
		})
	}
	for k := range n {
		next <- k
	}
	close(next)
	wg.Wait()
}

// report groups the differences by reader and aspect.
type report struct {
	groups map[string]*group
	known  map[string]int
	bytes  int
}

type group struct {
	n        int
	examples []string
}

func (r *report) add(c *Case, up, gd []byte, reader string, diffs []string) {
	if len(diffs) == 0 {
		return
	}
	if d := knownDefectOf(up, c.Mint, reader); d != "" {
		if r.known == nil {
			r.known = map[string]int{}
		}
		r.known[reader+" / "+d]++
		return
	}
	aspect, _, _ := strings.Cut(diffs[0], ":")
	key := reader + " / " + aspect
	if r.groups == nil {
		r.groups = map[string]*group{}
	}
	gr := r.groups[key]
	if gr == nil {
		gr = &group{}
		r.groups[key] = gr
	}
	gr.n++
	if len(gr.examples) < *examples {
		gr.examples = append(gr.examples, fmt.Sprintf("%s, traits %s\n    %s\n    upstream: %s\n    guard:    %s",
			c.Name, traitList(c.Traits), strings.Join(diffs, "\n    "), clip(up), clip(gd)))
	}
}

func (r *report) finish(t *testing.T) {
	t.Helper()
	for _, k := range sortedKeys(r.known) {
		t.Logf("excluded by defects_test.go (knownDefects, readerConflicts): %s: %d cases", k, r.known[k])
	}
	for _, k := range sortedKeys(r.groups) {
		gr := r.groups[k]
		t.Errorf("%s: %d cases differ; first ones:\n  %s", k, gr.n, strings.Join(gr.examples, "\n  "))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func traitList(m map[string]bool) string {
	if len(m) == 0 {
		return "(none)"
	}
	return strings.Join(sortedKeys(m), ",")
}

// clip quotes b, eliding the middle of long inputs.
func clip(b []byte) string {
	if len(b) > 400 {
		return strconv.Quote(string(b[:200])) + fmt.Sprintf(" …%d bytes… ", len(b)-400) + strconv.Quote(string(b[len(b)-200:]))
	}
	return strconv.Quote(string(b))
}

// coverage counts the cases per trait, so a generator change that loses an
// edge shows in the log.
func coverage(cases []*Case) string {
	n := map[string]int{}
	for _, c := range cases {
		for k := range c.Traits {
			n[k]++
		}
		n["transport="+c.Transport]++
		n["mint="+strconv.FormatBool(c.Mint)]++
	}
	var parts []string
	for _, k := range sortedKeys(n) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, n[k]))
	}
	return strings.Join(parts, " ")
}
