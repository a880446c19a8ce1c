// A proxy-wasm ABI 0.2.1 host of its own in node, for the V8 figures of
// make bench (tools/internal/bench/v8.go): only the env functions and the WASI
// functions the plugins import, each as cheap as Envoy's C++ is for the same
// job — no allocation per call where Envoy has none, header maps serialized
// byte-wise straight into the guest's memory (as Envoy's exportPairs does),
// strings never built from bytes but for shared-data keys.
//
//   node --no-liftoff --no-wasm-lazy-compilation v8host.js SPEC.json
//
// SPEC.json (written by v8.go): the modules, each started in its own VM
// with its own shared data; the exchanges that seed them and the
// tombstones to write; checks; the workloads; and the A/B comparisons to
// run between modules. It prints one line per figure:
//
//   start MODULE NS                       median ns of a VM start
//   check MODULE/NAME JSON                what a module did to a check exchange
//   round WORKLOAD A B RATIO QA:QB,..     A/B over a whole round, and each
//                                         side's ns per unit in each ABBA quad
//                                         of blocks
//   memory MODULE BYTES                   linear memory at the end
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

  functions() {
    const h = this;
    const live = () => { if (h.u8.byteLength === 0) h.refresh(); };
    const hmap = (t) => (t === 0 ? h.req : t === 2 ? h.resp : null);
    return {
      env: {
        proxy_log(level, p, n) { if (level >= 3) h.warnings++; return OK; },
        // Envoy's default level, info: debug lines are dropped.
        proxy_get_log_level(retLevel) { live(); h.dv.setUint32(retLevel, 2, true); return OK; },
        proxy_set_effective_context() { return OK; },
        proxy_get_property(p, n, retPtr, retSize) {
          live();
          // "response\0flags": no response flag (a clean end).
          if (n === 14 && h.buf.latin1Slice(p, p + n) === 'response\0flags') return h.ret(ZERO8, retPtr, retSize);
          return NOT_FOUND;
        },
        proxy_send_local_response() { h.local = true; return OK; },
        proxy_get_shared_data(kp, kn, retPtr, retSize, casPtr) {
          live();
          const e = h.shared.get(h.buf.latin1Slice(kp, kp + kn));
          if (e === undefined) return NOT_FOUND;
          h.ret(e.v, retPtr, retSize);
          h.dv.setUint32(casPtr, e.cas, true);
          return OK;
        },
        proxy_set_shared_data(kp, kn, vp, vn, cas) {
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
          live();
          const m = hmap(t);
          const i = m === null ? -1 : m.find(h.u8, kp, kn);
          if (i < 0) return NOT_FOUND;
          return h.ret(m.v[i], retPtr, retSize);
        },
        proxy_get_header_map_pairs(t, retPtr, retSize) {
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
          live();
          const m = hmap(t);
          if (m === null) return BAD_ARGUMENT;
          let n = 0;
          for (let i = 0; i < m.n; i++) n += m.k[i].length + m.v[i].length;
          h.dv.setUint32(retSize, n, true);
          return OK;
        },
        proxy_replace_header_map_value(t, kp, kn, vp, vn) {
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
          live();
          const m = hmap(t);
          if (m === null) return BAD_ARGUMENT;
          for (let i = m.find(h.u8, kp, kn); i >= 0; i = m.find(h.u8, kp, kn)) {
            m.k.splice(i, 1); m.v.splice(i, 1); m.n--;
          }
          return OK;
        },
        proxy_get_buffer_bytes(t, start, len, retPtr, retSize) {
          live();
          let b = null;
          if (t === h.cfgType) b = t === BUF_PLUGIN_CONFIG ? h.config : EMPTY;
          else if (t === BUF_RESPONSE_BODY) b = h.body;
          if (b === null) return NOT_FOUND;
          return h.ret(b.subarray(start, start + len), retPtr, retSize);
        },
        proxy_set_buffer_bytes(t, start, len, p, n) {
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

// exchange converts an exchange of the spec into the host's form; a body
// named by body_ref is shared (converted once).
function exchange(e, bodies, i) {
  const sub = (pairs) => (i === undefined ? pairs : pairs.map(([k, v]) => [k, v.replaceAll('{i}', String(i))]));
  return {
    req: template(sub(e.req)),
    resp: e.resp ? template(sub(e.resp)) : null,
    body: e.body_ref ? bodies[e.body_ref] : (e.body || []).map(latin1),
  };
}

// cycle returns a function that runs n exchanges of xs round-robin and
// returns their units.
function cycle(h, xs, unit) {
  let next = 0;
  return (n) => {
    for (let i = 0; i < n; i++) {
      h.run(xs[next]);
      if (++next === xs.length) next = 0;
    }
    return n * unit;
  };
}

const now = () => process.hrtime.bigint();

// interleave runs a and b alternately in ABBA blocks of n/blocks
// operations, rounds+1 times (the first round warms up and is not counted),
// as tools/internal/bench/timing.go's interleave does: per round, A/B over the
// round and each side's ns per unit in each quad of blocks.
function interleave(a, b, n, rounds, blocks) {
  const block = Math.max(Math.floor(n / blocks), 1);
  const out = [];
  const time = (f, ops) => { const t = now(); const u = f(ops); return [Number(now() - t), u]; };
  for (let r = -1; r < rounds; r++) {
    const round = [0, 0, 0, 0], quad = [0, 0, 0, 0], quads = [];
    for (let done = 0, i = 0; done < n; i++) {
      const ops = Math.min(block, n - done);
      done += ops;
      let at, au, bt, bu;
      if (i % 2 === 0) { [at, au] = time(a, ops); [bt, bu] = time(b, ops); }
      else { [bt, bu] = time(b, ops); [at, au] = time(a, ops); }
      for (const s of [round, quad]) { s[0] += at; s[1] += au; s[2] += bt; s[3] += bu; }
      if (i % 2 === 1 || done === n) {
        quads.push((quad[0] / quad[1]).toFixed(3) + ':' + (quad[2] / quad[3]).toFixed(3));
        quad.fill(0);
      }
    }
    if (r >= 0) out.push([(round[0] / round[1]) / (round[2] / round[3]), quads]);
  }
  return out;
}

function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const bodies = {};
  for (const [name, chunks] of Object.entries(spec.bodies || {})) bodies[name] = chunks.map(latin1);
  const seed = (spec.seed || []).map((e) => exchange(e, bodies));
  const hosts = {};
  for (const m of spec.modules) {
    const mod = new WebAssembly.Module(fs.readFileSync(m.path));
    // The first start is not counted; the host kept is the last one.
    const starts = [];
    let h;
    for (let i = -1; i < Math.max(m.starts, 0); i++) {
      const t = now();
      h = new Host(mod, m.config);
      if (i >= 0) starts.push(Number(now() - t));
    }
    hosts[m.name] = h;
    if (starts.length > 0) {
      starts.sort((p, q) => p - q);
      console.log('start ' + m.name + ' ' + starts[starts.length >> 1]);
    }
    if (!m.seed) continue;
    for (const x of seed) h.run(x);
    for (let i = 0; i < m.tombstones; i++) {
      for (const e of spec.tombstone) h.run(exchange(e, bodies, i));
    }
  }
  for (const c of spec.checks || []) {
    const h = hosts[c.module];
    const x = exchange(c.exchange, bodies);
    h.run(x);
    console.log('check ' + c.module + '/' + c.name + ' ' + JSON.stringify({ header: h.req.value(c.header), local: h.local, shared_keys: h.shared.size }));
  }
  const work = {};
  for (const [name, w] of Object.entries(spec.workloads)) work[name] = { xs: w.exchanges.map((e) => exchange(e, bodies)), unit: w.unit };
  for (const c of spec.comparisons) {
    const w = work[c.workload];
    for (const [ratio, quads] of interleave(cycle(hosts[c.a], w.xs, w.unit), cycle(hosts[c.b], w.xs, w.unit), c.n, spec.rounds, spec.blocks)) {
      console.log('round ' + c.workload + ' ' + c.a + ' ' + c.b + ' ' + ratio.toFixed(4) + ' ' + quads.join(','));
    }
  }
  for (const [name, h] of Object.entries(hosts)) console.log('memory ' + name + ' ' + h.mem.buffer.byteLength);
}

main();
