package bench

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// V8Flags are the flags Envoy's V8 runtime compiles with: no Liftoff
// baseline tier, every function compiled by the optimizing tier up front.
var V8Flags = []string{"--no-liftoff", "--no-wasm-lazy-compilation"}

// v8HostJS is the proxy-wasm host of the V8 figures: node's V8, run with
// V8Flags, drives a plan's modules through the same exchanges as the
// embedded host, A/B interleaved the same way, with host calls as cheap as
// Envoy's C++.
//
//go:embed v8host.js
var v8HostJS string

// V8Run is a plan's outcome in V8.
type V8Run struct {
	Results     Results
	VMStartNs   map[string]float64 // median VM start, by module
	MemoryBytes map[string]int64   // linear memory at the end, by module
	NodeVersion string
}

// v8Exchange is an exchange as v8host.js reads it.
type v8Exchange struct {
	Req     [][2]string `json:"req"`
	Resp    [][2]string `json:"resp"`
	Body    []string    `json:"body,omitempty"`
	BodyRef string      `json:"body_ref,omitempty"` // a body of v8Spec.Bodies
}

type v8Spec struct {
	Modules     []v8Module            `json:"modules"`
	Seed        []v8Exchange          `json:"seed"`
	Tombstone   []v8Exchange          `json:"tombstone"` // "{i}" in header values: the tombstone's number
	Bodies      map[string][]string   `json:"bodies"`
	Checks      []v8Check             `json:"checks"`
	Workloads   map[string]v8Workload `json:"workloads"`
	Comparisons []v8Comparison        `json:"comparisons"`
	Rounds      int                   `json:"rounds"`
	Blocks      int                   `json:"blocks"`
}

type v8Module struct {
	Name       string `json:"name"`
	Path       string `json:"path"`
	Config     string `json:"config"`
	Seed       bool   `json:"seed"`
	Tombstones int    `json:"tombstones"`
	Starts     int    `json:"starts"` // VM starts to time (0: one start, untimed)
}

type v8Check struct {
	Module   string     `json:"module"`
	Name     string     `json:"name"`
	Exchange v8Exchange `json:"exchange"`
	Header   string     `json:"header"`
}

type v8Workload struct {
	Exchanges []v8Exchange `json:"exchanges"`
	Unit      int64        `json:"unit"`
}

type v8Comparison struct {
	Workload string `json:"workload"`
	A        string `json:"a"`
	B        string `json:"b"`
	N        int    `json:"n"`
}

// v8Outcome is what a check exchange left: the checked request header
// (nil: absent), whether the module answered locally, and its shared data's
// keys.
type v8Outcome struct {
	Header     *string `json:"header"`
	Local      bool    `json:"local"`
	SharedKeys int     `json:"shared_keys"`
}

func toV8(x wasmhost.Exchange) v8Exchange {
	pairs := func(hs wasmhost.Headers) [][2]string {
		if hs == nil {
			return nil
		}
		out := make([][2]string, len(hs))
		for i, h := range hs {
			out[i] = [2]string{h.Key, h.Value}
		}
		return out
	}
	e := v8Exchange{Req: pairs(x.Request), Resp: pairs(x.Response)}
	for _, c := range x.ResponseBody {
		e.Body = append(e.Body, string(c))
	}
	return e
}

// spec writes the plan as v8host.js reads it; modules' .wasm files go to
// dir.
func (p *plan) spec(dir string, o Options) (v8Spec, error) {
	s := v8Spec{Rounds: o.Rounds, Blocks: blocksPerRound, Workloads: map[string]v8Workload{}}
	for _, x := range p.pop.streams {
		s.Seed = append(s.Seed, toV8(x))
	}
	for _, x := range tombstoneExchanges(tombstonePrefix + "{i}") {
		s.Tombstone = append(s.Tombstone, toV8(x))
	}
	var stream []string
	for _, c := range p.stream {
		stream = append(stream, string(c))
	}
	s.Bodies = map[string][]string{WorkSSE: stream}
	for i, m := range p.modules {
		path := filepath.Join(dir, strconv.Itoa(i)+".wasm")
		if err := os.WriteFile(path, m.wasm, 0o644); err != nil {
			return s, err
		}
		vm := v8Module{Name: m.name, Path: path, Config: m.config, Seed: m.seed, Tombstones: m.tombstones}
		if m.name == modGuard || m.name == modPassthrough {
			vm.Starts = min(o.Rounds, 9)
		}
		s.Modules = append(s.Modules, vm)
		if !m.seed || m.config == "" {
			continue
		}
		s.Checks = append(s.Checks, v8Check{Module: m.name, Name: "resume", Header: "last-event-id",
			Exchange: toV8(Resume(p.pop.sessions[0], p.pop.cursors[0]))})
		if m.tombstones > 0 {
			s.Checks = append(s.Checks, v8Check{Module: m.name, Name: "tombstoned", Header: "mcp-session-id",
				Exchange: toV8(Request(tombstoneSession(m.tombstones - 1)))})
		}
	}
	for _, c := range p.comparisons {
		s.Comparisons = append(s.Comparisons, v8Comparison{c.workload, c.a, c.b, c.n})
		if _, ok := s.Workloads[c.workload]; ok {
			continue
		}
		xs, unit := p.exchanges(c.workload)
		w := v8Workload{Unit: unit}
		for _, x := range xs {
			e := toV8(x)
			if c.workload == WorkSSE {
				e.Body, e.BodyRef = nil, WorkSSE
			}
			w.Exchanges = append(w.Exchanges, e)
		}
		s.Workloads[c.workload] = w
	}
	return s, nil
}

// runV8 runs the plan in node's V8 with Envoy's flags, through v8host.js.
// It returns nil, nil without node on PATH, and an error when a guard did
// not do its work there (a resume's cursor not forwarded untagged, a
// tombstoned session not refused).
func (p *plan) runV8(ctx context.Context, o Options) (*V8Run, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		o.progress("V8: node not found on PATH; skipped")
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "bench-v8host-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	spec, err := p.spec(dir, o)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	for name, b := range map[string][]byte{"spec.json": js, "v8host.js": []byte(v8HostJS)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	o.progress("V8 (%s): %d modules, %d comparisons of %d rounds", strings.Join(V8Flags, " "), len(spec.Modules), len(spec.Comparisons), o.Rounds)
	args := append(append([]string{}, V8Flags...), filepath.Join(dir, "v8host.js"), filepath.Join(dir, "spec.json"))
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench: node running the V8 host: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	run, checks, err := parseV8(out)
	if err != nil {
		return nil, err
	}
	run.NodeVersion = nodeVersion(ctx, node)
	for _, c := range spec.Checks {
		got, ok := checks[c.Module+"/"+c.Name]
		switch {
		case !ok:
			return nil, fmt.Errorf("bench: V8: no outcome of the check %s/%s", c.Module, c.Name)
		case c.Name == "resume" && (got.Header == nil || "http:"+*got.Header != p.pop.cursors[0] || got.Local || got.SharedKeys == 0):
			return nil, fmt.Errorf("bench: in V8 the %s did not forward the resume's cursor untagged (%+v, want last-event-id %q, records in shared data)", c.Module, got, p.pop.cursors[0])
		case c.Name == "tombstoned" && !got.Local:
			return nil, fmt.Errorf("bench: in V8 the %s did not refuse the last tombstoned session", c.Module)
		}
	}
	for _, c := range p.comparisons {
		if got := len(run.Results[c.key].Rounds); got != o.Rounds {
			return nil, fmt.Errorf("bench: node printed %d rounds of %s (%s against %s), want %d", got, c.workload, c.a, c.b, o.Rounds)
		}
	}
	return run, nil
}

// parseV8 reads v8host.js's output lines.
func parseV8(out []byte) (*V8Run, map[string]v8Outcome, error) {
	run := &V8Run{Results: Results{}, VMStartNs: map[string]float64{}, MemoryBytes: map[string]int64{}}
	checks := map[string]v8Outcome{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if err := run.parseLine(sc.Text(), checks); err != nil {
			return nil, nil, fmt.Errorf("bench: unexpected line from the V8 host: %q: %w", sc.Text(), err)
		}
	}
	return run, checks, sc.Err()
}

// parseLine reads one line of v8host.js's output.
func (run *V8Run) parseLine(line string, checks map[string]v8Outcome) error {
	f := strings.Fields(line)
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return -1
		}
		return v
	}
	switch {
	case len(f) == 3 && f[0] == "check":
		var c v8Outcome
		if err := json.Unmarshal([]byte(f[2]), &c); err != nil {
			return err
		}
		checks[f[1]] = c
	case len(f) == 3 && f[0] == "start" && num(f[2]) > 0:
		run.VMStartNs[f[1]] = num(f[2])
	case len(f) == 3 && f[0] == "memory" && num(f[2]) > 0:
		run.MemoryBytes[f[1]] = int64(num(f[2]))
	case len(f) == 6 && f[0] == "round" && num(f[4]) > 0:
		k := key{f[1], f[2], f[3]}
		p := run.Results[k]
		p.Rounds = append(p.Rounds, num(f[4]))
		for _, q := range strings.Split(f[5], ",") {
			a, b, _ := strings.Cut(q, ":")
			if num(a) <= 0 || num(b) <= 0 {
				return fmt.Errorf("quad %q", q)
			}
			p.AQuads, p.BQuads = append(p.AQuads, num(a)), append(p.BQuads, num(b))
		}
		run.Results[k] = p
	default:
		return fmt.Errorf("not a start, check, round or memory line")
	}
	return nil
}
