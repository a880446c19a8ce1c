package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tetratelabs/wazero"
)

// v8Script compiles two modules alternately (ABBA, after one uncounted
// round) with WebAssembly.compile and prints "a_ns b_ns a_cpu_ns
// b_cpu_ns" per round: wall time, and the CPU time of the whole process
// (V8 compiles on background threads too). Each
// compilation gets distinct bytes (a custom section with a counter appended)
// so that V8's per-isolate cache of compiled modules never answers.
const v8Script = `
const fs = require('fs');
const [fa, fb, n] = process.argv.slice(1);
const mods = [fs.readFileSync(fa), fs.readFileSync(fb)];
let seq = 0;
function variant(buf) {
  seq++;
  const payload = Buffer.from([5, 98, 101, 110, 99, 104, seq & 255, (seq >> 8) & 255, (seq >> 16) & 255, 0]);
  return Buffer.concat([buf, Buffer.from([0, payload.length]), payload]);
}
async function time(i) {
  const bytes = variant(mods[i]);
  const t = process.hrtime.bigint(), c = process.cpuUsage();
  await WebAssembly.compile(bytes);
  const cpu = process.cpuUsage(c);
  return [Number(process.hrtime.bigint() - t), (cpu.user + cpu.system) * 1000];
}
(async () => {
  for (let r = -1; r < Number(n); r++) {
    let a, b;
    if (r % 2 === 0) { a = await time(0); b = await time(1); }
    else { b = await time(1); a = await time(0); }
    if (r >= 0) console.log(a[0] + ' ' + b[0] + ' ' + a[1] + ' ' + b[1]);
  }
})().catch(e => { console.error(String(e)); process.exit(1); });
`

// compileRounds caps the rounds of the compile measures: a compilation
// takes seconds on a busy machine.
const compileRounds = 3

// compileTimes measures what a configuration push costs: V8 (node's, with
// Envoy's flags) and wazero compiling the guard and the passthrough plugin
// alternately, and a VM start in wazero (instantiate, _initialize, the root
// context, proxy_on_vm_start, proxy_on_configure) of each. Without node
// on PATH the V8 figure stays unmeasured.
func compileTimes(ctx context.Context, w *Wasm, o Options, rep *Report) error {
	n := min(o.Rounds, compileRounds)
	o.progress("wazero compile: %d rounds", n)
	var err error
	if rep.WazeroCompile, err = alternate(n, func(i int) (float64, error) {
		return wazeroCompile(ctx, [2][]byte{w.Guard, w.Passthrough}[i])
	}); err != nil {
		return err
	}
	o.progress("wazero VM start: %d rounds", o.Rounds)
	if rep.WazeroVMStart, err = alternate(o.Rounds, func(i int) (float64, error) {
		t := time.Now()
		h, err := newHost(ctx, [2][]byte{w.Guard, w.Passthrough}[i], [2]string{GuardConfig, ""}[i], 1)
		if err != nil {
			return 0, err
		}
		d := time.Since(t)
		h.Close(ctx)
		return float64(d.Nanoseconds()), nil
	}); err != nil {
		return err
	}
	node, err := exec.LookPath("node")
	if err != nil {
		o.progress("V8 compile: node not found on PATH; skipped")
		return nil
	}
	dir, err := os.MkdirTemp("", "bench-v8-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	a, b := filepath.Join(dir, "guard.wasm"), filepath.Join(dir, "passthrough.wasm")
	if err := os.WriteFile(a, w.Guard, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(b, w.Passthrough, 0o644); err != nil {
		return err
	}
	o.progress("V8 compile (%s): %d rounds", strings.Join(V8Flags, " "), n)
	args := append(append([]string{}, V8Flags...), "-e", v8Script, a, b, strconv.Itoa(n))
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("bench: node compiling the modules: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var an, bn, ac, bc float64
		if _, err := fmt.Sscan(sc.Text(), &an, &bn, &ac, &bc); err != nil || bn == 0 || bc == 0 {
			return fmt.Errorf("bench: unexpected output from node: %q", sc.Text())
		}
		rep.V8Compile.add(sides{ans: an, au: 1, bns: bn, bu: 1})
		rep.V8CompileCPU.add(sides{ans: ac, au: 1, bns: bc, bu: 1})
	}
	if len(rep.V8Compile.AQuads) != n {
		return fmt.Errorf("bench: node printed %d rounds, want %d", len(rep.V8Compile.AQuads), n)
	}
	rep.NodeVersion = nodeVersion(ctx, node)
	return nil
}

// alternate times f(0) and f(1) (ns each) in ABBA order, rounds times
// after an uncounted round.
func alternate(rounds int, f func(int) (float64, error)) (Pair, error) {
	var p Pair
	for r := -1; r < rounds; r++ {
		order := [2]int{0, 1}
		if r%2 != 0 {
			order = [2]int{1, 0}
		}
		var ns [2]float64
		for _, i := range order {
			t, err := f(i)
			if err != nil {
				return p, err
			}
			ns[i] = t
		}
		if r >= 0 {
			p.add(sides{ans: ns[0], au: 1, bns: ns[1], bu: 1})
		}
	}
	return p, nil
}

// wazeroCompile compiles wasm in a fresh wazero runtime (no cache) and
// returns the ns it took.
func wazeroCompile(ctx context.Context, wasm []byte) (float64, error) {
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	t := time.Now()
	m, err := rt.CompileModule(ctx, wasm)
	d := time.Since(t)
	if err != nil {
		return 0, fmt.Errorf("bench: wazero compiling a module: %w", err)
	}
	m.Close(ctx)
	return float64(d.Nanoseconds()), nil
}

func nodeVersion(ctx context.Context, node string) string {
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "node (version unknown)"
	}
	return "node " + strings.TrimSpace(string(out))
}
