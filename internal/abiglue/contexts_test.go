package abiglue_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// contextsTCPFrom is testdata/contexts' tcpFrom: from this ID on, a context
// is a TCP one.
const contextsTCPFrom = 1 << 30

// httpCallbacks are the HTTP callbacks of the ABI with the contexts
// plugin's word for each and the arguments after the context ID.
var httpCallbacks = []struct {
	export, says string
	args         []uint64
}{
	{"proxy_on_request_headers", "request_headers", []uint64{3, 0}},
	{"proxy_on_request_body", "request_body", []uint64{0, 0}},
	{"proxy_on_request_trailers", "request_trailers", []uint64{0}},
	{"proxy_on_response_headers", "response_headers", []uint64{2, 0}},
	{"proxy_on_response_body", "response_body", []uint64{0, 1}},
	{"proxy_on_response_trailers", "response_trailers", []uint64{0}},
}

// contextsHost runs testdata/contexts under the test host with two plugin
// contexts, 1 and 2, started.
func contextsHost(t *testing.T) (*oldEnvoyHost, context.Context) {
	t.Helper()
	h := &oldEnvoyHost{}
	ctx := load(t, buildPlugin(t, "contexts", true), h)
	if err := h.lifecycle(ctx, 1); err != nil {
		t.Fatalf("plugin context 1: %v", err)
	}
	for _, cb := range []struct {
		name string
		args []uint64
	}{{"proxy_on_context_create", []uint64{2, 0}}, {"proxy_on_configure", []uint64{2, 0}}} {
		if _, err := h.call(ctx, "", cb.name, cb.args...); err != nil {
			t.Fatalf("plugin context 2: %v", err)
		}
	}
	return h, ctx
}

// says calls export on the plugin and checks the log lines it wrote.
func (h *oldEnvoyHost) says(ctx context.Context, t *testing.T, want []string, export string, args ...uint64) []uint64 {
	t.Helper()
	mark := len(h.logs)
	res, err := h.call(ctx, "", export, args...)
	if err != nil {
		t.Fatalf("%s%v: %v", export, args, err)
	}
	if got := h.logs[mark:]; !slices.Equal(got, want) {
		t.Fatalf("%s%v logged %q, want %q", export, args, got, want)
	}
	return res
}

func line(what string, id uint64) string { return what + " " + strconv.FormatUint(id, 10) }

// TestHTTPContextsByID checks the glue's table of HTTP contexts
// (internal/abiglue/sdkglue/abiglue_contexts.go) against a model: 20,000
// random steps open streams (mostly the next ID, as Envoy allocates them,
// sometimes after a gap), run any HTTP callback on any open stream, and end
// streams in any order, past a thousand open at once and back down to none,
// so the table grows, shrinks and shifts entries back on removal. Every
// callback must reach the context its ID names, made by the plugin context
// it was created under; every open stream is checked again every 500 steps.
func TestHTTPContextsByID(t *testing.T) {
	h, ctx := contextsHost(t)
	rng := rand.New(rand.NewPCG(31, 32))
	open := map[uint64]uint64{} // stream ID -> its plugin context
	var ids []uint64            // the keys of open, to pick from
	next, most, least := uint64(10), 0, 1<<30
	checkAll := func() {
		for _, id := range ids {
			h.says(ctx, t, []string{line("request_headers", id), line("root_of_"+strconv.FormatUint(id, 10), open[id])},
				"proxy_on_request_headers", id, 0, 0)
		}
	}
	for step := range 20000 {
		createShare := 0.6 // filling up first, then draining to none
		if step >= 8000 {
			createShare = 0.15
		}
		switch r := rng.Float64(); {
		case r < createShare || len(ids) == 0:
			if rng.IntN(10) == 0 {
				next += uint64(rng.IntN(1 << 16))
			}
			id, root := next, uint64(1+rng.IntN(2))
			next++
			h.says(ctx, t, nil, "proxy_on_context_create", id, root)
			open[id] = root
			ids = append(ids, id)
			most = max(most, len(ids))
		case r < createShare+(1-createShare)/2:
			id := ids[rng.IntN(len(ids))]
			cb := httpCallbacks[rng.IntN(len(httpCallbacks))]
			want := []string{line(cb.says, id)}
			if cb.says == "request_headers" {
				want = append(want, line("root_of_"+strconv.FormatUint(id, 10), open[id]))
			}
			h.says(ctx, t, want, cb.export, append([]uint64{id}, cb.args...)...)
		default:
			i := rng.IntN(len(ids))
			id := ids[i]
			h.says(ctx, t, []string{line("stream_done", id)}, "proxy_on_log", id)
			if res := h.says(ctx, t, nil, "proxy_on_done", id); res[0] != 1 {
				t.Fatalf("proxy_on_done(%d) = %d, want 1", id, res[0])
			}
			h.says(ctx, t, nil, "proxy_on_delete", id)
			delete(open, id)
			ids[i] = ids[len(ids)-1]
			ids = ids[:len(ids)-1]
		}
		if step >= 8000 {
			least = min(least, len(ids))
		}
		if step%500 == 499 {
			checkAll()
		}
	}
	checkAll()
	if most < 1000 || least > 4 {
		t.Errorf("%d to %d streams open at once: the walk should rise past a thousand and drain to a few, so the table grows and shrinks", least, most)
	}
	t.Logf("%d streams open at most, %d at the fewest after that", most, least)
}

// homeIn16 is the slot where the glue's table (abiglue_contexts.go, at its
// smallest size, 16 slots) starts its probe for id: the top four bits of
// its Fibonacci hash.
func homeIn16(id uint32) uint32 { return (id * 0x9E3779B9) >> 28 }

// idsHomedAt returns n context IDs from first on whose probe starts at slot.
func idsHomedAt(slot uint32, first uint64, n int) []uint64 {
	var ids []uint64
	for id := first; len(ids) < n; id++ {
		if homeIn16(uint32(id)) == slot {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestHTTPContextsWrapAround fills the last slots of the table at its
// smallest size so that probes run past its end into slot 0 and on, then
// ends streams in every position of such a cluster: each removal must move
// back the entries whose probe passed through the freed slot, around the
// end of the table too, and every open stream must still be reached.
func TestHTTPContextsWrapAround(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0}, {2, 0, 4, 1, 5, 3}, {3, 5, 1, 4, 0, 2}} {
		h, ctx := contextsHost(t)
		// Four streams homed at slot 15 and two at slot 0: the cluster
		// runs 15, 0, 1, 2, then the slot-0 streams at 3 and 4.
		ids := append(idsHomedAt(15, 100, 4), idsHomedAt(0, 100, 2)...)
		for _, id := range ids {
			h.says(ctx, t, nil, "proxy_on_context_create", id, 1)
		}
		open := slices.Clone(ids)
		for _, k := range order {
			id := ids[k]
			h.says(ctx, t, []string{line("stream_done", id)}, "proxy_on_log", id)
			h.says(ctx, t, nil, "proxy_on_delete", id)
			open = slices.DeleteFunc(open, func(o uint64) bool { return o == id })
			for _, o := range open {
				h.says(ctx, t, []string{line("response_headers", o)}, "proxy_on_response_headers", o, 0, 1)
			}
		}
	}
}

// TestTCPContextsStayWithTheSDK checks that a context the plugin makes no
// HTTP context for becomes the SDK's TCP context, among HTTP ones.
func TestTCPContextsStayWithTheSDK(t *testing.T) {
	h, ctx := contextsHost(t)
	const stream, conn = 10, contextsTCPFrom + 3
	h.says(ctx, t, nil, "proxy_on_context_create", stream, 1)
	h.says(ctx, t, nil, "proxy_on_context_create", conn, 1)
	h.says(ctx, t, []string{line("new_connection", conn)}, "proxy_on_new_connection", conn)
	h.says(ctx, t, []string{line("response_headers", stream)}, "proxy_on_response_headers", stream, 0, 1)
	h.says(ctx, t, []string{line("tcp_done", conn)}, "proxy_on_log", conn)
	if res := h.says(ctx, t, nil, "proxy_on_done", conn); res[0] != 1 {
		t.Errorf("proxy_on_done(%d) = %d, want 1", conn, res[0])
	}
	h.says(ctx, t, nil, "proxy_on_delete", conn)
	h.says(ctx, t, []string{line("stream_done", stream)}, "proxy_on_log", stream)
	h.says(ctx, t, nil, "proxy_on_delete", stream)
}

// TestHTTPCalloutsFromHTTPContexts checks the SDK's HTTP callouts made from
// HTTP contexts the glue holds: the answer reaches the callback through the
// plugin context that made the stream (each of two), a stream may make
// several, and the answer to a stream deleted meanwhile runs no callback
// (the SDK's rule, tetratelabs/proxy-wasm-go-sdk#261) — also after 300
// other streams came and went between the callout and its answer.
func TestHTTPCalloutsFromHTTPContexts(t *testing.T) {
	h, ctx := contextsHost(t)
	callout := func(id, root uint64) uint64 {
		t.Helper()
		h.headers = [][2]string{{"x-callout", "1"}}
		defer func() { h.headers = nil }()
		h.says(ctx, t, []string{line("request_headers", id), line("root_of_"+strconv.FormatUint(id, 10), root)},
			"proxy_on_request_headers", id, 1, 0)
		return uint64(h.callouts)
	}
	const a, b, c = 10, 11, 12
	h.says(ctx, t, nil, "proxy_on_context_create", a, 2)
	h.says(ctx, t, nil, "proxy_on_context_create", b, 1)
	h.says(ctx, t, nil, "proxy_on_context_create", c, 1)

	ca := callout(a, 2)
	cb := callout(b, 1)
	c1, c2 := callout(c, 1), callout(c, 1)
	// Open and end enough streams around them that the table grows and
	// shrinks again: what a stream's callouts need must move with it.
	for id := uint64(100); id < 400; id++ {
		h.says(ctx, t, nil, "proxy_on_context_create", id, 1)
	}
	for id := uint64(100); id < 400; id++ {
		h.says(ctx, t, []string{line("stream_done", id)}, "proxy_on_log", id)
		h.says(ctx, t, nil, "proxy_on_delete", id)
	}
	h.says(ctx, t, []string{line("callout_answered", a)}, "proxy_on_http_call_response", 2, ca, 0, 0, 0)
	h.says(ctx, t, []string{line("stream_done", b)}, "proxy_on_log", b)
	h.says(ctx, t, nil, "proxy_on_delete", b)
	h.says(ctx, t, nil, "proxy_on_http_call_response", 1, cb, 0, 0, 0)
	h.says(ctx, t, []string{line("callout_answered", c)}, "proxy_on_http_call_response", 1, c2, 0, 0, 0)
	h.says(ctx, t, []string{line("callout_answered", c)}, "proxy_on_http_call_response", 1, c1, 0, 0, 0)
}

// TestUnknownHTTPContextAborts checks that a callback on an ID that names
// no context, a second creation of one, or a stream under a plugin context
// that does not exist (any more), panics as the SDK does: the host called
// it wrongly, and the VM must not go on with a context mixed up.
func TestUnknownHTTPContextAborts(t *testing.T) {
	for _, tc := range []struct {
		name, export, panic string
		args                []uint64
		deleteRoot          uint64 // a plugin context deleted first (0: none)
	}{
		{"deleted", "proxy_on_request_headers", "invalid context id on proxy_on_request_headers", []uint64{10, 0, 0}, 0},
		{"never created", "proxy_on_response_body", "invalid context id on proxy_on_response_body", []uint64{99, 0, 1}, 0},
		{"created twice", "proxy_on_context_create", "context id duplicated", []uint64{11, 1}, 0},
		{"unknown plugin context", "proxy_on_context_create", "invalid plugin context id", []uint64{12, 7}, 0},
		{"deleted plugin context", "proxy_on_context_create", "invalid plugin context id", []uint64{12, 2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, ctx := contextsHost(t)
			h.says(ctx, t, nil, "proxy_on_context_create", 10, 1)
			h.says(ctx, t, nil, "proxy_on_context_create", 11, 1)
			h.says(ctx, t, []string{line("stream_done", 10)}, "proxy_on_log", 10)
			h.says(ctx, t, nil, "proxy_on_delete", 10)
			if tc.deleteRoot != 0 {
				h.says(ctx, t, nil, "proxy_on_done", tc.deleteRoot)
				h.says(ctx, t, nil, "proxy_on_delete", tc.deleteRoot)
				// The other plugin context still makes streams.
				h.says(ctx, t, nil, "proxy_on_context_create", 13, 1)
				h.says(ctx, t, []string{line("request_headers", 13), line("root_of_13", 1)}, "proxy_on_request_headers", 13, 0, 0)
			}
			_, err := h.call(ctx, "", tc.export, tc.args...)
			if err == nil || !strings.Contains(h.output.String(), tc.panic) {
				t.Errorf("%s%v: error %v, guest output %q; want the panic %q", tc.export, tc.args, err, h.tail(), tc.panic)
			}
		})
	}
}
