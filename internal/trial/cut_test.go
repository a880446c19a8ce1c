package trial

import (
	"net/http"
	"slices"
	"testing"
)

func TestParseCuts(t *testing.T) {
	got, err := ParseCuts("/sse=5, /mcp=1")
	if want := []Cut{{"/mcp", 1}, {"/sse", 5}}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseCuts = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"sse=5", "/sse=0", "/sse", "/sse=x", "/sse=1,/sse=2"} {
		if _, err := ParseCuts(bad); err == nil {
			t.Errorf("ParseCuts(%q) accepted", bad)
		}
	}
}

// TestCutFault: the longest matching prefix decides; other paths are not cut.
func TestCutFault(t *testing.T) {
	cuts := []Cut{{"/mcp", 4}, {"/mcp/deep", 1}}
	for path, want := range map[string]int{"/mcp": 4, "/mcp/deep/x": 1, "/sse": 0} {
		r, _ := http.NewRequest("GET", "http://proxy"+path, nil)
		if got := cutFault(cuts, r).CutAfterEvents; got != want {
			t.Errorf("%s: cut after %d events; want %d", path, got, want)
		}
	}
}
