package trial

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/wasmhost"
)

// Cut resets every response stream under a path prefix once the client
// received Events complete SSE events, as an idle timeout severs a stream
// (guardproxy -cut, make run ARGS='-cut /mcp=4'). The plugin sees an idle
// timeout (flag SI); the request line says end=cut.
type Cut struct {
	Prefix string
	Events int
}

// ParseCuts parses "/prefix=N,/prefix=N" (N > 0), sorted by prefix.
func ParseCuts(s string) ([]Cut, error) {
	seen := map[string]bool{}
	var out []Cut
	for _, part := range strings.Split(s, ",") {
		prefix, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		v, err := strconv.Atoi(n)
		if !ok || !strings.HasPrefix(prefix, "/") || err != nil || v <= 0 {
			return nil, fmt.Errorf("%q: want /prefix=N with N > 0", part)
		}
		if seen[prefix] {
			return nil, fmt.Errorf("%q: prefix %s given twice", part, prefix)
		}
		seen[prefix] = true
		out = append(out, Cut{Prefix: prefix, Events: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Prefix < out[j].Prefix })
	return out, nil
}

// cutFault returns the fault the longest matching prefix of cuts injects
// into r's response stream (none when no prefix matches).
func cutFault(cuts []Cut, r *http.Request) wasmhost.Fault {
	best := -1
	var f wasmhost.Fault
	for _, c := range cuts {
		if strings.HasPrefix(r.URL.Path, c.Prefix) && len(c.Prefix) > best {
			best, f = len(c.Prefix), wasmhost.Fault{CutAfterEvents: c.Events}
		}
	}
	return f
}
