// Command mcp-dualstack serves the reference dual-transport MCP upstream: the
// legacy HTTP+SSE transport (/sse, /messages) and Streamable HTTP (/mcp) on one
// port, with the seed incident's bug on purpose (one event-ID allocator,
// bridged sessions, replay strictly after the cursor). See package
// internal/dualstack.
//
// With -layout python (or python-one-chunk) /mcp answers as the official
// Python SDK's server does: CRLF events, UUID event IDs, tools/call streams
// closed after their priming event (SEP-1699 polling), and a resume that
// replays the cursor's stream and then writes a fresh priming event.
//
//	mcp-dualstack -listen 127.0.0.1:8080 -first-event-id 100 -replay exclusive
//	mcp-dualstack -layout python -retry-ms 100
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-dualstack:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:8080", "address to listen on")
	first := flag.Int("first-event-id", 1, "counter value of the first event ID (100 reproduces the seed's e-100…)")
	replay := flag.String("replay", "exclusive", "resume contract: exclusive (strictly after the cursor, the seed's bug) or inclusive")
	noPriming := flag.Bool("no-priming", false, "do not start POST /mcp SSE answers with a priming event")
	preferJSON := flag.Bool("prefer-json", false, "answer POST /mcp with application/json when the client accepts both")
	hold := flag.Bool("hold-post-streams", false, "keep every POST /mcp SSE answer open after its result")
	layoutName := flag.String("layout", "default", "how /mcp writes and resumes streams: default, python (the Python SDK's server, one flush per event) or python-one-chunk (the same, events ready together in one chunk)")
	retryMS := flag.Int("retry-ms", 1000, "retry field of priming events in the python layouts (0: none)")
	flag.Parse()

	mode, err := dualstack.ParseReplayMode(*replay)
	if err != nil {
		return err
	}
	layout, err := dualstack.ParseLayout(*layoutName)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	srv := dualstack.New(dualstack.Options{
		FirstEventID:    *first,
		Replay:          mode,
		Logger:          logger,
		NoPriming:       *noPriming,
		PreferJSON:      *preferJSON,
		HoldPostStreams: *hold,
		Layout:          layout,
		RetryMillis:     *retryMS,
	})
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	logger.Info("listening", "addr", ln.Addr().String(), "first_event_id", srv.NextEventID().String(), "replay", mode.String(), "layout", layout.String())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.Close() // ends the open streams so Shutdown does not wait on them
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
