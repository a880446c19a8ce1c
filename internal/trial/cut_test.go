package trial

import (
	"net/http"
	"slices"
	"testing"
)

func TestParseCuts(t *testing.T) {
	got, err := ParseCuts("/sse=5, /mcp=1,/messages=result")
	if want := []Cut{{Prefix: "/mcp", Events: 1}, {Prefix: "/messages", AfterResult: true}, {Prefix: "/sse", Events: 5}}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseCuts = %v, %v; want %v", got, err, want)
	}
	if s := got[1].String() + " " + got[0].String(); s != "/messages=result /mcp=1" {
		t.Errorf("String: %s", s)
	}
	for _, bad := range []string{"sse=5", "/sse=0", "/sse", "/sse=x", "/sse=1,/sse=2", "/sse=Result", "/sse=result,/sse=1"} {
		if _, err := ParseCuts(bad); err == nil {
			t.Errorf("ParseCuts(%q) accepted", bad)
		}
	}
}

// TestCutFault: the longest matching prefix decides; other paths are not cut.
func TestCutFault(t *testing.T) {
	cuts := []Cut{{Prefix: "/mcp", Events: 4}, {Prefix: "/mcp/deep", Events: 1}, {Prefix: "/mcp/result", AfterResult: true}}
	for path, want := range map[string]int{"/mcp": 4, "/mcp/deep/x": 1, "/sse": 0, "/mcp/result": 0} {
		r, _ := http.NewRequest("GET", "http://proxy"+path, nil)
		f := cutFault(cuts, r)
		if f.CutAfterEvents != want || f.CutAfterResult != (path == "/mcp/result") {
			t.Errorf("%s: fault %+v; want a cut after %d events, after a result only on /mcp/result", path, f, want)
		}
	}
}
