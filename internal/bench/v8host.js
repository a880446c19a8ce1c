// A proxy-wasm ABI 0.2.1 host of its own in node, for the V8 figures of
// make bench (internal/bench/v8.go): only the env functions and the WASI
// functions the plugins import, each as cheap as Envoy's C++ is for the same
// job — no allocation per call where Envoy has none, header maps serialized
// byte-wise straight into the guest's memory (as Envoy's exportPairs does),
// strings never built from bytes but for shared-data keys.
//
//   node --no-liftoff --no-wasm-lazy-compilation v8host.js SPEC.json
//
// SPEC.json (written by v8.go): the two modules (a: the guard, b: the
// passthrough plugin), their plugin configurations, the exchanges that seed
// each host, the workloads and the run's size. It prints one line per
// figure:
//
//   round NAME A_NS B_NS      ns per exchange of each side, one per round
//   calls NAME IMPORT COUNT   host calls per exchange of side A
//   host NAME NS              the host's own cost of one operation
//   check NAME VALUE          what side A did to a check exchange
'use strict';
const fs = require('fs');
const crypto = require('crypto');

const OK = 0, NOT_FOUND = 1, BAD_ARGUMENT = 2, INVALID_MEMORY_ACCESS = 6, CAS_MISMATCH = 8;
const ENOSYS = 52, EBADF = 8, ENOTSUP = 58;
const BUF_RESPONSE_BODY = 1, BUF_VM_CONFIG = 6, BUF_PLUGIN_CONFIG = 7;

const latin1 = (s) => Uint8Array.from(Buffer.from(s, 'latin1'));

// A header map held as the host holds it: keys and values as bytes.
class HeaderMap {
  constructor() { this.k = []; this.v = []; this.n = 0; }
  reset(tpl) {
    this.n = tpl.k.length;
    for (let i = 0; i < this.n; i++) { this.k[i] = tpl.k[i]; this.v[i] = tpl.v[i]; }
  }
  find(u8, p, len) {
    outer: for (let i = 0; i < this.n; i++) {
      const k = this.k[i];
      if (k.length !== len) continue;
      for (let j = 0; j < len; j++) if (k[j] !== u8[p + j]) continue outer;
      return i;
    }
    return -1;
  }
  value(name) {
    const want = latin1(name);
    for (let i = 0; i < this.n; i++) {
      if (Buffer.compare(this.k[i], want) === 0) return Buffer.from(this.v[i]).toString('latin1');
    }
    return null;
  }
}

function template(pairs) {
  const t = { k: [], v: [] };
  for (const [k, v] of pairs || []) { t.k.push(latin1(k)); t.v.push(latin1(v)); }
  return t;
}

class Host {
  constructor(module, config) {
    this.config = latin1(config || '');
    this.shared = new Map();
    this.nextCAS = 0;
    this.metrics = [];
    this.calls = null; // import name -> count, while counting
    this.req = new HeaderMap();
    this.resp = new HeaderMap();
    this.body = null; // the response body chunk of the current callback
    this.bodyOut = null;
    this.local = false;
    this.warnings = 0;
    this.nextID = 2;
    const imports = { env: {}, wasi_snapshot_preview1: {} };
    const fns = this.functions();
    for (const imp of WebAssembly.Module.imports(module)) {
      const f = fns[imp.module] && fns[imp.module][imp.name];
      if (!f) throw new Error('v8host: the module imports ' + imp.module + '.' + imp.name + ', which this host does not provide');
      imports[imp.module][imp.name] = f;
    }
    this.instance = new WebAssembly.Instance(module, imports);
    this.x = this.instance.exports;
    this.mem = this.x.memory;
    this.refresh();
    this.x._initialize();
    this.x.proxy_on_context_create(1, 0);
    this.cfgType = BUF_VM_CONFIG;
    if (!this.x.proxy_on_vm_start(1, 0)) throw new Error('v8host: proxy_on_vm_start returned false');
    this.cfgType = BUF_PLUGIN_CONFIG;
    if (!this.x.proxy_on_configure(1, this.config.length)) throw new Error('v8host: proxy_on_configure returned false');
    this.cfgType = 0;
  }

  // refresh renews the views of guest memory after it grew (a grown
  // memory detaches the old buffer: its views read 0 bytes).
  refresh() {
    this.u8 = new Uint8Array(this.mem.buffer);
    this.dv = new DataView(this.mem.buffer);
    this.buf = Buffer.from(this.mem.buffer);
  }

  // alloc asks the guest for n bytes (proxy_on_memory_allocate, as Envoy
  // does for every value it returns) and renews the views.
  alloc(n) {
    const p = this.x.proxy_on_memory_allocate(n);
    if (this.u8.byteLength === 0) this.refresh();
    return p;
  }

  // ret hands bytes b to the guest through the out-parameters.
  // An allocator answer of 0 is its failure: the call fails without
  // writing, as in proxy-wasm-cpp-host (copyToPointerSize).
  ret(b, retPtr, retSize) {
    const p = this.alloc(b.length);
    if (p === 0) return INVALID_MEMORY_ACCESS;
    this.u8.set(b, p);
    this.dv.setUint32(retPtr, p, true);
    this.dv.setUint32(retSize, b.length, true);
    return OK;
  }

  count(name) {
    if (this.calls !== null) this.calls[name] = (this.calls[name] || 0) + 1;
  }

  functions() {
    const h = this;
    const live = () => { if (h.u8.byteLength === 0) h.refresh(); };
    const hmap = (t) => (t === 0 ? h.req : t === 2 ? h.resp : null);
    return {
      env: {
        proxy_log(level, p, n) { h.count('proxy_log'); if (level >= 3) h.warnings++; return OK; },
        // Envoy's default level, info: debug lines are dropped.
        proxy_get_log_level(retLevel) { h.count('proxy_get_log_level'); live(); h.dv.setUint32(retLevel, 2, true); return OK; },
        proxy_set_effective_context() { h.count('proxy_set_effective_context'); return OK; },
        proxy_get_property(p, n, retPtr, retSize) {
          h.count('proxy_get_property');
          live();
          // "response\0flags": no response flag (a clean end).
          if (n === 14 && h.buf.latin1Slice(p, p + n) === 'response\0flags') return h.ret(ZERO8, retPtr, retSize);
          return NOT_FOUND;
        },
        proxy_send_local_response() { h.count('proxy_send_local_response'); h.local = true; return OK; },
        proxy_get_shared_data(kp, kn, retPtr, retSize, casPtr) {
          live();
          const e = h.shared.get(h.buf.latin1Slice(kp, kp + kn));
          if (e === undefined) { h.count('proxy_get_shared_data_miss'); return NOT_FOUND; }
          h.count('proxy_get_shared_data_hit');
          h.ret(e.v, retPtr, retSize);
          h.dv.setUint32(casPtr, e.cas, true);
          return OK;
        },
        proxy_set_shared_data(kp, kn, vp, vn, cas) {
          h.count('proxy_set_shared_data');
          live();
          const key = h.buf.latin1Slice(kp, kp + kn);
          const e = h.shared.get(key);
          if (e !== undefined && cas !== 0 && cas !== e.cas) return CAS_MISMATCH;
          h.nextCAS = (h.nextCAS + 1) >>> 0 || 1;
          const v = h.u8.slice(vp, vp + vn);
          if (e === undefined) h.shared.set(key, { v, cas: h.nextCAS });
          else { e.v = v; e.cas = h.nextCAS; }
          return OK;
        },
        proxy_get_header_map_value(t, kp, kn, retPtr, retSize) {
          h.count('proxy_get_header_map_value');
          live();
          const m = hmap(t);
          const i = m === null ? -1 : m.find(h.u8, kp, kn);
          if (i < 0) return NOT_FOUND;
          return h.ret(m.v[i], retPtr, retSize);
        },
        proxy_get_header_map_pairs(t, retPtr, retSize) {
          h.count('proxy_get_header_map_pairs');
          const m = hmap(t);
          if (m === null) return BAD_ARGUMENT;
          if (m.n === 0) { live(); h.dv.setUint32(retPtr, 0, true); h.dv.setUint32(retSize, 0, true); return OK; }
          let size = 4 + 8 * m.n;
          for (let i = 0; i < m.n; i++) size += m.k[i].length + m.v[i].length + 2;
          const p = h.alloc(size);
          if (p === 0) return INVALID_MEMORY_ACCESS;
          const u8 = h.u8, dv = h.dv;
          dv.setUint32(p, m.n, true);
          let s = p + 4, d = p + 4 + 8 * m.n;
          for (let i = 0; i < m.n; i++) {
            const k = m.k[i], v = m.v[i];
            dv.setUint32(s, k.length, true); dv.setUint32(s + 4, v.length, true); s += 8;
            for (let j = 0; j < k.length; j++) u8[d++] = k[j];
            u8[d++] = 0;
            for (let j = 0; j < v.length; j++) u8[d++] = v[j];
            u8[d++] = 0;
          }
          dv.setUint32(retPtr, p, true);
          dv.setUint32(retSize, size, true);
          return OK;
        },
        proxy_get_header_map_size(t, retSize) {
          // Envoy's HeaderMap::byteSize: the key and value bytes.
          h.count('proxy_get_header_map_size');
          live();
          const m = hmap(t);
          if (m === null) return BAD_ARGUMENT;
          let n = 0;
          for (let i = 0; i < m.n; i++) n += m.k[i].length + m.v[i].length;
          h.dv.setUint32(retSize, n, true);
          return OK;
        },
        proxy_replace_header_map_value(t, kp, kn, vp, vn) {
          h.count('proxy_replace_header_map_value');
          live();
          const m = hmap(t);
          if (m === null) return BAD_ARGUMENT;
          const v = h.u8.slice(vp, vp + vn);
          const i = m.find(h.u8, kp, kn);
          if (i >= 0) m.v[i] = v;
          else { m.k[m.n] = h.u8.slice(kp, kp + kn); m.v[m.n] = v; m.n++; }
          return OK;
        },
        proxy_remove_header_map_value(t, kp, kn) {
          h.count('proxy_remove_header_map_value');
          live();
          const m = hmap(t);
          if (m === null) return BAD_ARGUMENT;
          for (let i = m.find(h.u8, kp, kn); i >= 0; i = m.find(h.u8, kp, kn)) {
            m.k.splice(i, 1); m.v.splice(i, 1); m.n--;
          }
          return OK;
        },
        proxy_get_buffer_bytes(t, start, len, retPtr, retSize) {
          h.count('proxy_get_buffer_bytes');
          live();
          let b = null;
          if (t === h.cfgType) b = t === BUF_PLUGIN_CONFIG ? h.config : EMPTY;
          else if (t === BUF_RESPONSE_BODY) b = h.body;
          if (b === null) return NOT_FOUND;
          return h.ret(b.subarray(start, start + len), retPtr, retSize);
        },
        proxy_set_buffer_bytes(t, start, len, p, n) {
          h.count('proxy_set_buffer_bytes');
          live();
          if (t !== BUF_RESPONSE_BODY || h.body === null) return BAD_ARGUMENT;
          h.bodyOut = h.u8.slice(p, p + n);
          return OK;
        },
        proxy_define_metric(type, p, n, retID) {
          live();
          h.metrics.push(0);
          h.dv.setUint32(retID, h.metrics.length, true);
          return OK;
        },
        proxy_increment_metric(id, delta) {
          h.count('proxy_increment_metric');
          h.metrics[id - 1] += Number(delta);
          return OK;
        },
      },
      wasi_snapshot_preview1: {
        sched_yield() { return 0; },
        proc_exit(code) { throw new Error('v8host: proc_exit(' + code + ')'); },
        args_get() { return 0; },
        args_sizes_get(a, b) { live(); h.dv.setUint32(a, 0, true); h.dv.setUint32(b, 0, true); return 0; },
        environ_get() { return 0; },
        environ_sizes_get(a, b) { live(); h.dv.setUint32(a, 0, true); h.dv.setUint32(b, 0, true); return 0; },
        clock_time_get(id, precision, retPtr) {
          h.count('clock_time_get');
          live();
          let ns;
          if (id === 0) ns = Date.now() * 1e6;
          else if (id === 1) ns = Math.floor(performance.now() * 1e6) + 1;
          else return ENOTSUP;
          h.dv.setUint32(retPtr, ns % 4294967296, true);
          h.dv.setUint32(retPtr + 4, Math.floor(ns / 4294967296), true);
          return 0;
        },
        random_get(p, n) { live(); crypto.getRandomValues(h.u8.subarray(p, p + n)); return 0; },
        fd_write(fd, iovs, n, nwritten) {
          live();
          if (fd !== 1 && fd !== 2) return EBADF;
          let total = 0;
          for (let i = 0; i < n; i++) {
            const p = h.dv.getUint32(iovs + 8 * i, true), len = h.dv.getUint32(iovs + 8 * i + 4, true);
            process.stderr.write(h.buf.latin1Slice(p, p + len));
            total += len;
          }
          h.dv.setUint32(nwritten, total, true);
          return 0;
        },
        fd_close() { return 0; },
        fd_fdstat_get(fd, p) {
          live();
          if (fd !== 1 && fd !== 2) return EBADF;
          h.u8.fill(0, p, p + 24);
          h.u8[p + 8] = 64;
          return 0;
        },
        fd_fdstat_set_flags() { return ENOSYS; },
        fd_prestat_get() { return EBADF; },
        fd_prestat_dir_name() { return ENOSYS; },
        poll_oneoff() { return ENOSYS; },
      },
    };
  }

  // run drives one exchange through the plugin as Envoy does for a
  // stream: context, request headers, response headers and body unless
  // answered locally, then log, done, delete.
  run(x) {
    const id = this.nextID++, x_ = this.x;
    this.local = false;
    x_.proxy_on_context_create(id, 1);
    this.req.reset(x.req);
    x_.proxy_on_request_headers(id, x.req.k.length, x.resp === null ? 1 : 0);
    if (!this.local && x.resp !== null) {
      this.resp.reset(x.resp);
      x_.proxy_on_response_headers(id, x.resp.k.length, x.body.length === 0 ? 1 : 0);
      for (let i = 0; i < x.body.length && !this.local; i++) {
        this.body = x.body[i];
        x_.proxy_on_response_body(id, this.body.length, i === x.body.length - 1 ? 1 : 0);
      }
      this.body = null;
    }
    x_.proxy_on_log(id);
    x_.proxy_on_done(id);
    x_.proxy_on_delete(id);
  }
}

const ZERO8 = new Uint8Array(8);
const EMPTY = new Uint8Array(0);

function exchange(e) {
  return { req: template(e.req), resp: e.resp ? template(e.resp) : null, body: (e.body || []).map(latin1) };
}

// cycle returns a function that runs n exchanges of xs round-robin.
function cycle(h, xs) {
  let next = 0;
  return (n) => {
    for (let i = 0; i < n; i++) {
      h.run(xs[next]);
      if (++next === xs.length) next = 0;
    }
  };
}

const now = () => process.hrtime.bigint();

// interleave runs a and b alternately in ABBA blocks of n/blocks
// operations, rounds+1 times (the first round warms up and is not counted),
// as internal/bench/timing.go's interleave does, and returns the ns per
// operation of each side per round.
function interleave(a, b, n, rounds, blocks) {
  const block = Math.max(Math.floor(n / blocks), 1);
  const out = [];
  for (let r = -1; r < rounds; r++) {
    let an = 0n, bn = 0n;
    for (let done = 0, i = 0; done < n; i++) {
      const ops = Math.min(block, n - done);
      done += ops;
      const first = i % 2 === 0 ? a : b;
      const second = i % 2 === 0 ? b : a;
      const t0 = now(); first(ops);
      const t1 = now(); second(ops);
      const t2 = now();
      if (i % 2 === 0) { an += t1 - t0; bn += t2 - t1; } else { bn += t1 - t0; an += t2 - t1; }
    }
    if (r >= 0) out.push([Number(an) / n, Number(bn) / n]);
  }
  return out;
}

// timeOp returns the median ns per call of f over rounds of n calls.
function timeOp(f, n, rounds) {
  const xs = [];
  for (let r = -1; r < rounds; r++) {
    const t0 = now();
    for (let i = 0; i < n; i++) f();
    const ns = Number(now() - t0) / n;
    if (r >= 0) xs.push(ns);
  }
  xs.sort((p, q) => p - q);
  return xs[xs.length >> 1];
}

// hostCosts measures what the host's own calls cost: the exchange loop
// around empty callbacks (every export a no-op), and the data-returning
// calls a guarded request makes, each called from JS with the guest's
// allocator replaced by a fixed address (the allocator is guest code: the
// guard's figures count it, this one does not). It runs last: it writes
// into the top of guest memory, which the guest may own.
function hostCosts(h, x, spec) {
  const n = Math.max(spec.requests, 20000), rounds = Math.max(spec.rounds, 5);
  const empty = Object.create(h);
  const nop = () => 0;
  empty.x = {};
  for (const name of Object.keys(h.x)) empty.x[name] = nop;
  console.log('host exchange_empty ' + timeOp(() => empty.run(x), n, rounds).toFixed(1));
  h.refresh();
  const top = h.u8.length - 4096, out = top + 2048, key = top + 2048 + 64;
  h.alloc = () => top;
  const env = h.functions().env;
  h.req.reset(x.req);
  console.log('host header_map_pairs ' + timeOp(() => env.proxy_get_header_map_pairs(0, out, out + 4), n, rounds).toFixed(1));
  h.u8.set(latin1('mcp-resume-guard/v2/10000/b/1234'), key);
  console.log('host shared_data_miss ' + timeOp(() => env.proxy_get_shared_data(key, 32, out, out + 4, out + 8), n, rounds).toFixed(1));
  const [hit] = h.shared.keys();
  if (hit !== undefined) {
    h.u8.set(latin1(hit), key);
    console.log('host shared_data_hit ' + timeOp(() => env.proxy_get_shared_data(key, hit.length, out, out + 4, out + 8), n, rounds).toFixed(1));
  }
}

function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const a = new Host(new WebAssembly.Module(fs.readFileSync(spec.a)), spec.a_config);
  const b = new Host(new WebAssembly.Module(fs.readFileSync(spec.b)), spec.b_config);
  const seed = spec.seed.map(exchange);
  for (const h of [a, b]) for (const x of seed) h.run(x);
  for (const c of spec.checks || []) {
    const x = exchange(c.exchange);
    a.run(x);
    console.log('check ' + c.name + ' ' + JSON.stringify({ header: a.req.value(c.header), local: a.local, warnings: a.warnings, shared_keys: a.shared.size }));
  }
  for (const w of spec.workloads) {
    const xs = w.exchanges.map(exchange);
    const ra = cycle(a, xs), rb = cycle(b, xs);
    a.calls = {};
    ra(xs.length);
    for (const [name, c] of Object.entries(a.calls)) console.log('calls ' + w.name + ' ' + name + ' ' + (c / xs.length).toFixed(2));
    a.calls = null;
    for (const [an, bn] of interleave(ra, rb, spec.requests, spec.rounds, spec.blocks)) {
      console.log('round ' + w.name + ' ' + an.toFixed(1) + ' ' + bn.toFixed(1));
    }
  }
  hostCosts(a, exchange(spec.workloads[0].exchanges[0]), spec);
}

main();
