package wasmhost

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// StatsText renders every metric as "name value" lines, sorted by name:
// the plugin's metrics under their own names (as Envoy's /stats shows them,
// without the wasmcustom. prefix) and the host's counters under wasmhost.*.
func (h *Host) StatsText() string {
	m := h.Metrics()
	st := h.Stats()
	m["wasmhost.streams"] = st.Streams
	m["wasmhost.traps"] = st.Traps
	m["wasmhost.restarts"] = st.Restarts
	m["wasmhost.local_replies"] = st.LocalReplies
	m["wasmhost.refused_local_replies"] = st.RefusedReplies
	for i := range st.VMRequests {
		p := "wasmhost.vm." + strconv.Itoa(i) + "."
		m[p+"requests"] = st.VMRequests[i]
		m[p+"traps"] = st.VMTraps[i]
		m[p+"memory_bytes"] = int64(st.VMMemoryBytes[i])
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, k := range names {
		fmt.Fprintf(&sb, "%s %d\n", k, m[k])
	}
	return sb.String()
}

// AdminHandler serves GET /stats (StatsText) and GET /ready ("LIVE", as
// Envoy's admin answers when the server is ready).
func AdminHandler(h *Host) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, h.StatsText())
	})
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "LIVE")
	})
	return mux
}

// ParseRoutes parses "prefix=name,prefix=name" (the guardproxy -routes
// flag).
func ParseRoutes(s string) ([]Route, error) {
	var out []Route
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		prefix, name, ok := strings.Cut(part, "=")
		if !ok || !strings.HasPrefix(prefix, "/") || name == "" {
			return nil, fmt.Errorf("route %q: want /prefix=route_name", part)
		}
		out = append(out, Route{PathPrefix: prefix, RouteName: name})
	}
	return out, nil
}
