package reliability

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// TestSurvivesGarbageCollection drives the guard, under the WASI of Envoy
// 1.33–1.38 (poll_oneoff answers ENOSYS, restricted calls during
// allocation trap), with requests that each make the guest allocate a 256
// KiB header map. The guest allocates far more than its linear memory ever
// holds, so its garbage collector must have completed at least
// allocated/memory cycles; none may abort the VM.
func TestSurvivesGarbageCollection(t *testing.T) {
	h, _ := newHost(t, config+"}", wasmhost.Options{})
	pad := strings.Repeat("x", 256<<10)
	const requests = 6000
	for i := range requests {
		x := postRequest(sessionID(i % 100))
		x.Request = append(x.Request, hdr("x-pad", pad))
		if _, err := h.Simulate(x); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	st := h.Stats()
	mem := int64(st.VMMemoryBytes[0])
	allocated := int64(requests) * int64(len(pad))
	cycles := allocated / mem
	t.Logf("allocated at least %d MiB in a %d MiB linear memory: at least %d GC cycles completed", allocated>>20, mem>>20, cycles)
	if st.Traps != 0 || st.Restarts != 0 {
		t.Fatalf("%d traps, %d restarts", st.Traps, st.Restarts)
	}
	if cycles < 100 {
		t.Errorf("only %d GC cycles proven; the test does not exercise the collector", cycles)
	}
	if got := h.WASIImports(); !contains(got, "poll_oneoff") {
		t.Logf("the module does not import poll_oneoff (imports: %v)", got)
	}
}

// TestSurvivesForcedGarbageCollections runs 3000 full garbage collections
// in a module built exactly like the guard (same toolchain, ABI glue and
// runtime patch), one per request, under Envoy 1.33–1.38's WASI: the runtime
// patch must keep every cycle away from poll_oneoff's ENOSYS.
func TestSurvivesForcedGarbageCollections(t *testing.T) {
	h, err := wasmhost.New(context.Background(), wasmhost.Options{Wasm: gcProbeWasm, PluginConfig: []byte("256")})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	const cycles = 3000
	for i := range cycles {
		if _, err := h.Simulate(postRequest("s-1")); err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
	}
	if st := h.Stats(); st.Traps != 0 || st.Streams != cycles {
		t.Fatalf("%d traps in %d streams", st.Traps, st.Streams)
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// TestTrapFailsOnlyItsRequest makes one request trap (the guest runs out of
// memory copying a session header far larger than its memory cap; a large
// header the guard does not read costs it nothing) while another
// stream is open on the other VM: only the trapping request fails, the other
// stream goes on being tagged, the trapped VM is restarted and serves the
// next requests, and shared data survives.
func TestTrapFailsOnlyItsRequest(t *testing.T) {
	h, _ := newHost(t, config+"}", wasmhost.Options{VMs: 2, MemoryLimitPages: 512}) // 32 MiB per VM
	open, err := h.NewStream(wasmhost.StreamInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open.OnRequestHeaders(get("/mcp", hdr("mcp-session-id", "s-open")), true); err != nil {
		t.Fatal(err)
	}
	if _, err := open.OnResponseHeaders(sseResponse(), false); err != nil {
		t.Fatal(err)
	}
	out, _, err := open.OnResponseBody([]byte(responseEvent("e-1", 1)), false)
	if err != nil || string(out) != mintIDs(responseEvent("e-1", 1), false) {
		t.Fatalf("first chunk of the open stream: %q, %v", out, err)
	}

	x := postRequest("s-trap")
	x.Request.Set("mcp-session-id", strings.Repeat("x", 48<<20))
	_, err = h.Simulate(x)
	var trap *wasmhost.TrapError
	if !errors.As(err, &trap) {
		t.Fatalf("the oversized request: err = %v, want a trap", err)
	}
	if trap.VM == open.VM() {
		t.Fatalf("the trap hit the VM of the open stream (%d)", trap.VM)
	}

	out, _, err = open.OnResponseBody([]byte(responseEvent("e-2", 2)), true)
	// The stream goes on where it was: e-2's previous ID is e-1.
	if err != nil || string(out) != mintIDs(responseEvent("e-1", 1)+responseEvent("e-2", 2), true)[len(mintIDs(responseEvent("e-1", 1), false)):] {
		t.Fatalf("the open stream after the other VM trapped: %q, %v", out, err)
	}
	if err := open.Finish(wasmhost.EndDownstreamDisconnect); err != nil {
		t.Fatal(err)
	}
	if _, ok := record(h, "s-open"); !ok {
		t.Error("the open stream's record is gone")
	}
	// Resuming from the cut stream's last result is a drain race that the
	// record answers on either VM: rewound to the previous event it kept.
	for i := range 4 {
		res, err := h.Simulate(resumeAt("s-open", "http:e-2"))
		if err != nil {
			t.Fatalf("request %d after the trap: %v", i, err)
		}
		if got := res.Request.Value("last-event-id"); got != "e-1" {
			t.Errorf("request %d after the trap (VM %d): forwarded cursor %q, want the rewind to e-1", i, res.VM, got)
		}
	}
	if st := h.Stats(); st.Traps != 1 || st.Restarts != 1 {
		t.Errorf("traps %d, restarts %d; want 1 and 1", st.Traps, st.Restarts)
	}
}

// TestSharedDataFailuresFailOpen makes every shared-data call fail: every
// request and stream still goes through (a resume is judged without its
// watermark, a forced re-initialization is still sent, a stream is still
// tagged), and each failure is counted in fail_open_total.
func TestSharedDataFailuresFailOpen(t *testing.T) {
	h, _ := newHost(t, config+"}", wasmhost.Options{})
	calls := 0
	h.SetSharedDataFault(func(op wasmhost.SharedDataOp, key string) bool {
		calls++
		return true
	})

	// A resume: the record cannot be read, the tagged cursor is forwarded.
	res, err := h.Simulate(resumeAt("s-1", "http:e-7"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Local != nil || res.Request.Value("last-event-id") != "e-7" {
		t.Errorf("resume without shared data: local %+v, cursor %q; want forwarded e-7", res.Local, res.Request.Value("last-event-id"))
	}
	after := metric(h, "fail_open_total")
	if after != 1 {
		t.Errorf("fail_open_total = %d after one failed read, want 1", after)
	}

	// A stream whose tail cannot be written is tagged anyway.
	res, err = h.Simulate(eventStream("s-1", [][]byte{[]byte(responseEvent("e-8", 8))}))
	if err != nil {
		t.Fatal(err)
	}
	if got := joined(res.ResponseBody); got != mintIDs(responseEvent("e-8", 8), true) {
		t.Errorf("stream without shared data: %q", got)
	}
	if n := metric(h, "fail_open_total"); n <= after {
		t.Errorf("fail_open_total = %d after a failed tail write, want more than %d", n, after)
	}
	after = metric(h, "fail_open_total")

	// An untagged cursor is still answered with a re-initialization.
	res, err = h.Simulate(resumeAt("s-2", "e-9"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Local == nil || res.Local.Status != 404 {
		t.Errorf("untagged cursor without shared data: %+v, want a 404 re-initialization", res.Local)
	}
	if n := metric(h, "fail_open_total"); n <= after {
		t.Errorf("fail_open_total = %d after a failed tombstone write, want more than %d", n, after)
	}
	if st := h.Stats(); st.Traps != 0 {
		t.Errorf("%d traps", st.Traps)
	}
	if calls == 0 {
		t.Error("the guard made no shared-data call")
	}

	// Shared data back: the guard records again.
	h.SetSharedDataFault(nil)
	before := metric(h, "fail_open_total")
	if _, err := h.Simulate(eventStream("s-3", [][]byte{[]byte(responseEvent("e-1", 1))})); err != nil {
		t.Fatal(err)
	}
	if _, ok := record(h, "s-3"); !ok {
		t.Error("no record once shared data works again")
	}
	if n := metric(h, "fail_open_total"); n != before {
		t.Errorf("fail_open_total moved from %d to %d with working shared data", before, n)
	}
}
