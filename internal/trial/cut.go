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
// received Events complete SSE events, or with AfterResult right after the
// first JSON-RPC result event, as an idle timeout severs a stream
// (guardproxy -cut, make run ARGS='-cut /mcp=4' or '-cut /mcp=result').
// The plugin sees an idle timeout (flag SI); the request line says end=cut.
type Cut struct {
	Prefix      string
	Events      int
	AfterResult bool
}

// CutAfterResult is the value of -cut that cuts right after a result
// event: /prefix=result.
const CutAfterResult = "result"

// String renders the cut as -cut takes it.
func (c Cut) String() string {
	if c.AfterResult {
		return c.Prefix + "=" + CutAfterResult
	}
	return c.Prefix + "=" + strconv.Itoa(c.Events)
}

// ParseCuts parses "/prefix=N,/prefix=result" (N > 0), sorted by prefix.
func ParseCuts(s string) ([]Cut, error) {
	seen := map[string]bool{}
	var out []Cut
	for _, part := range strings.Split(s, ",") {
		prefix, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		c := Cut{Prefix: prefix, AfterResult: n == CutAfterResult}
		v, err := strconv.Atoi(n)
		if !ok || !strings.HasPrefix(prefix, "/") || (!c.AfterResult && (err != nil || v <= 0)) {
			return nil, fmt.Errorf("%q: want /prefix=N with N > 0, or /prefix=%s", part, CutAfterResult)
		}
		if seen[prefix] {
			return nil, fmt.Errorf("%q: prefix %s given twice", part, prefix)
		}
		seen[prefix] = true
		if !c.AfterResult {
			c.Events = v
		}
		out = append(out, c)
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
			best, f = len(c.Prefix), wasmhost.Fault{CutAfterEvents: c.Events, CutAfterResult: c.AfterResult}
		}
	}
	return f
}
