package bench

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

// TestV8Host runs the JS host (v8host.js) on a few exchanges so that it
// cannot rot: RunV8 fails when the guard in V8 does not forward a resume's
// cursor untagged or writes no record; the guard reads a guarded request's
// headers with one map read there too, and every figure is produced.
func TestV8Host(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not on PATH")
	}
	o := QuickOptions()
	o.Rounds, o.Requests, o.Sessions = 1, 200, 20
	f, err := RunV8(context.Background(), testWasm(t), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		name string
		p    Pair
	}{{"request", f.Request}, {"unguarded", f.Unguarded}, {"resume", f.Resume}} {
		if w.p.Ratio() <= 0 || w.p.A() <= 0 {
			t.Errorf("%s: no figure (%+v)", w.name, w.p)
		}
	}
	req := f.Calls["request"]
	// :path alone first (whether the request is guarded), then the map.
	if req["proxy_get_header_map_pairs"] != 1 || req["proxy_get_header_map_value"] > 1 || req["proxy_get_shared_data_miss"] != 1 {
		t.Errorf("host calls per request %v, want one header map read, at most the :path value, and one shared-data miss", req)
	}
	if res := f.Calls["resume"]; res["proxy_get_shared_data_hit"] < 1 || res["proxy_replace_header_map_value"] != 1 {
		t.Errorf("host calls per resume %v, want a record read and the cursor replaced", res)
	}
	for _, k := range []string{"exchange_empty", "header_map_pairs", "shared_data_miss", "shared_data_hit"} {
		if f.HostNs[k] <= 0 {
			t.Errorf("host cost %s not measured (%v)", k, f.HostNs)
		}
	}
	// A share from one short round on a busy machine is noise; only its
	// presence is checked.
	if s := f.HostShare("request", f.Request); s <= 0 {
		t.Errorf("host share of a request %.3f, want above 0", s)
	}
}

// TestParseV8 reads every kind of line and refuses what is not one.
func TestParseV8(t *testing.T) {
	f, err := parseV8([]byte("round request 200.5 100\ncalls request proxy_log 1.50\nhost exchange_empty 60.0\ncheck resume {\"header\":\"e-1\",\"local\":false,\"warnings\":0,\"shared_keys\":3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Request.Ratio() != 2.005 || f.Calls["request"]["proxy_log"] != 1.5 || f.HostNs["exchange_empty"] != 60 ||
		f.Checks["resume"].Header == nil || *f.Checks["resume"].Header != "e-1" || f.Checks["resume"].SharedKeys != 3 {
		t.Errorf("parsed %+v", f)
	}
	for _, bad := range []string{"round request 1", "round nosuch 1 2", "round request 1 0", "calls request 1.5", "host x y", "what 1 2", "check resume {"} {
		if _, err := parseV8([]byte(bad + "\n")); err == nil || !strings.Contains(err.Error(), "unexpected line") {
			t.Errorf("%q: err %v", bad, err)
		}
	}
}
