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

// v8HostJS is the proxy-wasm host of the V8 figures: node's V8, run with
// Envoy's flags (V8Flags), drives the guard and the passthrough plugin
// through the same exchanges as the wazero figures, A/B interleaved in ABBA
// blocks (interleave's method), with host calls as cheap as Envoy's C++.
//
//go:embed v8host.js
var v8HostJS string

// V8Figures are the guard against the passthrough plugin in V8, and what the
// JS host itself costs.
type V8Figures struct {
	Request, Unguarded, Resume Pair
	// Calls are the host calls per exchange the guard makes, by workload
	// and import (proxy_get_shared_data split into _hit and _miss).
	Calls map[string]map[string]float64
	// HostNs is the host's own cost in ns: exchange_empty (the exchange
	// loop around no-op callbacks), header_map_pairs (the 9-header request
	// map), shared_data_miss and shared_data_hit (a watermark record).
	HostNs map[string]float64
	// Checks are what the guard did to the check exchanges, by name.
	Checks      map[string]v8Check
	NodeVersion string
}

type v8Check struct {
	Header     *string `json:"header"` // the checked request header after the plugin, nil: absent
	Local      bool    `json:"local"`  // the plugin answered locally
	Warnings   int     `json:"warnings"`
	SharedKeys int     `json:"shared_keys"`
}

// HostShare estimates the part of the guard's time per exchange of
// workload that is the host's own work (the exchange loop, the header map
// and shared-data reads, at the costs measured alone); the host calls it
// does not time (log, metrics, header replace) are left out.
func (f *V8Figures) HostShare(workload string, p Pair) float64 {
	if f == nil || p.A() == 0 {
		return 0
	}
	c := f.Calls[workload]
	ns := f.HostNs["exchange_empty"] +
		c["proxy_get_header_map_pairs"]*f.HostNs["header_map_pairs"] +
		c["proxy_get_shared_data_miss"]*f.HostNs["shared_data_miss"] +
		c["proxy_get_shared_data_hit"]*f.HostNs["shared_data_hit"]
	return ns / p.A()
}

// v8Exchange is an exchange as v8host.js reads it.
type v8Exchange struct {
	Req  [][2]string `json:"req"`
	Resp [][2]string `json:"resp"`
	Body []string    `json:"body,omitempty"`
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

func toV8All(xs []wasmhost.Exchange) []v8Exchange {
	out := make([]v8Exchange, len(xs))
	for i, x := range xs {
		out[i] = toV8(x)
	}
	return out
}

type v8Workload struct {
	Name      string       `json:"name"`
	Exchanges []v8Exchange `json:"exchanges"`
}

type v8Spec struct {
	A        string       `json:"a"`
	AConfig  string       `json:"a_config"`
	B        string       `json:"b"`
	BConfig  string       `json:"b_config"`
	Seed     []v8Exchange `json:"seed"`
	Checks   []v8CheckIn  `json:"checks"`
	Work     []v8Workload `json:"workloads"`
	Requests int          `json:"requests"`
	Rounds   int          `json:"rounds"`
	Blocks   int          `json:"blocks"`
}

type v8CheckIn struct {
	Name     string     `json:"name"`
	Exchange v8Exchange `json:"exchange"`
	Header   string     `json:"header"`
}

// v8Overheads measures the request, unguarded and resume workloads of the
// wazero figures in V8 (RunV8); without node on PATH it is skipped and the
// report says so.
func v8Overheads(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	f, err := RunV8(ctx, w, o)
	if err != nil || f == nil {
		return err
	}
	rep.V8 = f
	return nil
}

// RunV8 runs the guard and the passthrough plugin in node's V8 with
// Envoy's flags, through v8host.js: the same populations, exchanges and
// interleaving as the wazero figures. It returns nil, nil without node on
// PATH, and an error when the guard did not do its work there (a resume's
// cursor not forwarded untagged, no record written).
func RunV8(ctx context.Context, w *Wasm, o Options) (*V8Figures, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		o.progress("V8 overheads: node not found on PATH; skipped")
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "bench-v8host-")
	if err != nil {
		return nil, err
	}
	if os.Getenv("BENCH_V8_KEEP") == "" {
		defer os.RemoveAll(dir)
	} else {
		o.progress("V8 host files kept in %s", dir)
	}
	pop := newPopulation(o.Sessions)
	spec := v8Spec{
		A: filepath.Join(dir, "guard.wasm"), AConfig: GuardConfig,
		B:    filepath.Join(dir, "passthrough.wasm"),
		Seed: toV8All(pop.streams), Requests: o.Requests, Rounds: o.Rounds, Blocks: blocksPerRound,
		Checks: []v8CheckIn{{Name: "resume", Exchange: toV8(Resume(pop.sessions[0], pop.cursors[0])), Header: "last-event-id"}},
	}
	var req, ung, res []wasmhost.Exchange
	for i, s := range pop.sessions {
		req = append(req, Request(s))
		ung = append(ung, Unguarded(s))
		res = append(res, Resume(s, pop.cursors[i]))
	}
	spec.Work = []v8Workload{{"request", toV8All(req)}, {"unguarded", toV8All(ung)}, {"resume", toV8All(res)}}
	files := map[string][]byte{spec.A: w.Guard, spec.B: w.Passthrough, filepath.Join(dir, "v8host.js"): []byte(v8HostJS)}
	if files[filepath.Join(dir, "spec.json")], err = json.Marshal(spec); err != nil {
		return nil, err
	}
	for name, b := range files {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return nil, err
		}
	}
	o.progress("V8 overheads (%s): request, unguarded, resume: %d rounds of %d per side", strings.Join(V8Flags, " "), o.Rounds, o.Requests)
	args := append(append([]string{}, V8Flags...), filepath.Join(dir, "v8host.js"), filepath.Join(dir, "spec.json"))
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench: node running the V8 host: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	f, err := parseV8(out)
	if err != nil {
		return nil, err
	}
	f.NodeVersion = nodeVersion(ctx, node)
	c, ok := f.Checks["resume"]
	if want := pop.cursors[0][len("http:"):]; !ok || c.Header == nil || *c.Header != want || c.Local || c.SharedKeys == 0 {
		return nil, fmt.Errorf("bench: in V8 the guard did not forward the resume's cursor untagged (%+v, want last-event-id %q, records in shared data): is the V8 host broken?", c, want)
	}
	for _, p := range []struct {
		name string
		p    Pair
	}{{"request", f.Request}, {"unguarded", f.Unguarded}, {"resume", f.Resume}} {
		if len(p.p.Rounds) != o.Rounds {
			return nil, fmt.Errorf("bench: node printed %d rounds of %s, want %d", len(p.p.Rounds), p.name, o.Rounds)
		}
	}
	return f, nil
}

// parseV8 reads v8host.js's output lines.
func parseV8(out []byte) (*V8Figures, error) {
	f := &V8Figures{Calls: map[string]map[string]float64{}, HostNs: map[string]float64{}, Checks: map[string]v8Check{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if err := f.parseLine(sc.Text()); err != nil {
			return nil, fmt.Errorf("bench: unexpected line from the V8 host: %q: %w", sc.Text(), err)
		}
	}
	return f, nil
}

// parseLine reads one line of v8host.js's output into f.
func (f *V8Figures) parseLine(line string) error {
	kind, rest, _ := strings.Cut(line, " ")
	name, rest, _ := strings.Cut(rest, " ")
	if kind == "check" {
		var c v8Check
		if err := json.Unmarshal([]byte(rest), &c); err != nil {
			return err
		}
		f.Checks[name] = c
		return nil
	}
	var nums []float64
	var key string
	for i, s := range strings.Fields(rest) {
		v, err := strconv.ParseFloat(s, 64)
		switch {
		case err == nil:
			nums = append(nums, v)
		case kind == "calls" && i == 0:
			key = s
		default:
			return err
		}
	}
	switch {
	case kind == "round" && len(nums) == 2 && nums[1] > 0:
		p := map[string]*Pair{"request": &f.Request, "unguarded": &f.Unguarded, "resume": &f.Resume}[name]
		if p == nil {
			return fmt.Errorf("no workload %q", name)
		}
		p.ANs, p.BNs, p.Rounds = append(p.ANs, nums[0]), append(p.BNs, nums[1]), append(p.Rounds, nums[0]/nums[1])
	case kind == "calls" && key != "" && len(nums) == 1:
		if f.Calls[name] == nil {
			f.Calls[name] = map[string]float64{}
		}
		f.Calls[name][key] = nums[0]
	case kind == "host" && len(nums) == 1:
		f.HostNs[name] = nums[0]
	default:
		return fmt.Errorf("not a round, calls, host or check line")
	}
	return nil
}
