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
)

// v8Script compiles two modules alternately (ABBA, after one uncounted
// round) with WebAssembly.compile and prints "a_ns b_ns" per round. Each
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
  const t = process.hrtime.bigint();
  await WebAssembly.compile(bytes);
  return Number(process.hrtime.bigint() - t);
}
(async () => {
  for (let r = -1; r < Number(n); r++) {
    let a, b;
    if (r % 2 === 0) { a = await time(0); b = await time(1); }
    else { b = await time(1); a = await time(0); }
    if (r >= 0) console.log(a + ' ' + b);
  }
})().catch(e => { console.error(String(e)); process.exit(1); });
`

// V8Flags are the flags Envoy's V8 runtime compiles with: no Liftoff
// baseline tier, every function compiled by the optimizing tier up front.
var V8Flags = []string{"--no-liftoff", "--no-wasm-lazy-compilation"}

// v8MaxRounds caps the rounds of the V8 compile measure.
const v8MaxRounds = 5

// v8Compile measures how long V8 (node's) takes to compile the guard and the
// do-nothing plugin, as Envoy does on every configuration push. Without node
// on PATH the figure is left at zero and the report says so.
func v8Compile(ctx context.Context, w *Wasm, o Options, rep *Report) error {
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
	// A compilation takes seconds on a busy machine: fewer rounds.
	n := min(o.Rounds, v8MaxRounds)
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
		var an, bn float64
		if _, err := fmt.Sscan(sc.Text(), &an, &bn); err != nil || bn == 0 {
			return fmt.Errorf("bench: unexpected output from node: %q", sc.Text())
		}
		rep.V8Compile.ANs = append(rep.V8Compile.ANs, an)
		rep.V8Compile.BNs = append(rep.V8Compile.BNs, bn)
		rep.V8Compile.Rounds = append(rep.V8Compile.Rounds, an/bn)
	}
	if len(rep.V8Compile.Rounds) != n {
		return fmt.Errorf("bench: node printed %d rounds, want %d", len(rep.V8Compile.Rounds), n)
	}
	rep.NodeVersion = nodeVersion(ctx, node)
	return nil
}

func nodeVersion(ctx context.Context, node string) string {
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "node (version unknown)"
	}
	return "node " + strings.TrimSpace(string(out))
}
