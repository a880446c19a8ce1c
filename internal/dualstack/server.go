package dualstack

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
)

// Server is the dual-transport MCP server. It implements [http.Handler]; its
// methods are the hooks tests use to observe and drive it.
type Server struct {
	opts     Options
	log      *slog.Logger
	ids      *allocator
	sessions *store
	tools    []*tool
	mux      *http.ServeMux

	runsMu sync.Mutex
	runs   map[string]int

	resumes atomic.Int64

	ctx       context.Context // cancelled by Close; tools run under it
	cancel    context.CancelFunc
	closeOnce sync.Once
}

// New returns a server configured by opts.
func New(opts Options) *Server {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &Server{
		opts:     opts,
		log:      logger,
		ids:      newAllocator(opts.FirstEventID),
		sessions: newStore(),
		runs:     map[string]int{},
		ctx:      ctx,
		cancel:   cancel,
	}
	srv.tools = builtinTools()
	srv.mux = http.NewServeMux()
	srv.mux.HandleFunc("GET /{$}", serveIndex)
	srv.mux.HandleFunc("GET /sse", srv.serveLegacyStream)
	srv.mux.HandleFunc("POST /messages", srv.serveLegacyMessage)
	srv.mux.HandleFunc("/mcp", srv.serveMCP)
	srv.mux.HandleFunc("GET /debug/stats", srv.serveStats)
	srv.mux.HandleFunc("GET /debug/sessions", srv.serveSessions)
	srv.mux.HandleFunc("GET /debug/events", srv.serveEvents)
	srv.mux.HandleFunc("POST /debug/progress", srv.serveEmitProgress)
	return srv
}

// ServeHTTP routes a request to the legacy, Streamable HTTP or debug handlers
// and logs one line for it when it completes.
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	srv.logged(srv.mux).ServeHTTP(w, r)
}

// Close ends every open stream so an [net/http/httptest.Server] holding them
// can shut down, and cancels running tools. Sessions and logs stay readable.
func (srv *Server) Close() {
	srv.closeOnce.Do(func() {
		srv.cancel()
		for _, s := range srv.sessions.all() {
			s.mu.Lock()
			for st := range s.streams {
				st.stop()
			}
			s.mu.Unlock()
		}
	})
}

// Options returns the options the server was built with.
func (srv *Server) Options() Options { return srv.opts }

// ToolRuns returns how many times the named tool has executed.
func (srv *Server) ToolRuns(name string) int {
	srv.runsMu.Lock()
	defer srv.runsMu.Unlock()
	return srv.runs[name]
}

func (srv *Server) countRun(name string) int {
	srv.runsMu.Lock()
	defer srv.runsMu.Unlock()
	srv.runs[name]++
	return srv.runs[name]
}

// Resumes returns how many GET /mcp requests carried a Last-Event-ID that the
// server accepted.
func (srv *Server) Resumes() int { return int(srv.resumes.Load()) }

// NextEventID returns the ID the allocator will mint next.
func (srv *Server) NextEventID() EventID { return srv.ids.peek() }

// Sessions describes every live session, sorted by ID.
func (srv *Server) Sessions() []SessionInfo {
	all := srv.sessions.all()
	out := make([]SessionInfo, 0, len(all))
	for _, s := range all {
		out = append(out, s.info())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Events returns a copy of the session's event log: every event the server
// sent to it on either transport, in order. It reports false for an unknown
// session.
func (srv *Server) Events(sessionID string) ([]Event, bool) {
	s := srv.sessions.get(sessionID)
	if s == nil {
		return nil, false
	}
	return s.events(), true
}
