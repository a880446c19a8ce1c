package seedclient_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack"
	"github.com/mcp-resume-guard/mcp-resume-guard/internal/dualstack/seedclient"
)

// tagWriter prefixes every SSE id with the transport, as the guard does.
type tagWriter struct {
	http.ResponseWriter
	tag string
}

func (w *tagWriter) Write(p []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(p, []byte("id: e-"), []byte("id: "+w.tag+"e-"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *tagWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// fakeGuard is a stand-in for the proxy: it tags IDs by transport and answers
// a cross-transport cursor with a forced re-initialization.
func fakeGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tag := "http:"
		if r.URL.Path == "/sse" || r.URL.Path == "/messages" {
			tag = "sse:"
		}
		if c := r.Header.Get("Last-Event-ID"); c != "" {
			if !strings.HasPrefix(c, tag) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"cross_transport"}}`))
				return
			}
			r.Header.Set("Last-Event-ID", strings.TrimPrefix(c, tag))
		}
		next.ServeHTTP(&tagWriter{ResponseWriter: w, tag: tag}, r)
	})
}

// TestSeedThroughAProxy runs the seed client against a front door that is
// not the upstream: tagged IDs arrive, the refused resume is reported, and
// the retry re-initializes.
func TestSeedThroughAProxy(t *testing.T) {
	srv := dualstack.New(dualstack.Options{FirstEventID: 100})
	upstream := httptest.NewServer(srv)
	proxy := httptest.NewServer(fakeGuard(srv))
	t.Cleanup(func() { srv.Close(); proxy.Close(); upstream.Close() })

	rep, err := seedclient.RunSeed(context.Background(), seedclient.Config{
		BaseURL: proxy.URL, ControlURL: upstream.URL, ResumeWait: 2 * time.Second, Retry: true,
	})
	if err != nil {
		t.Fatalf("RunSeed: %v", err)
	}
	t.Log(rep)
	t.Log(rep.Describe())
	want := []string{"sse:e-100", "sse:e-101", "sse:e-102", "sse:e-103", "sse:e-104"}
	if !slices.Equal(rep.StreamEventIDs, want) || rep.Cursor != "sse:e-104" {
		t.Errorf("stream %v, cursor %q; want %v, sse:e-104", rep.StreamEventIDs, rep.Cursor, want)
	}
	if !rep.ForcedReinit() || rep.SilentLoss() || !strings.Contains(rep.ResumeBody, "cross_transport") {
		t.Errorf("resume %d %q: want the forced re-initialization", rep.ResumeStatus, rep.ResumeBody)
	}
	if !rep.Retried || !rep.Reinitialized || !rep.RetryResultArrived || rep.RetrySessionID == rep.SessionID {
		t.Errorf("retry: %+v", rep)
	}
	if rep.Runs() != 2 {
		t.Errorf("runs = %d, want 2", rep.Runs())
	}
	if !strings.Contains(rep.Describe(), "refused at once") {
		t.Errorf("Describe() does not tell the refusal:\n%s", rep.Describe())
	}
}
