package e2e

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// logStore keeps log messages at warning level and above.
type logStore struct {
	mu   sync.Mutex
	msgs []string
}

func (s *logStore) add(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs = append(s.msgs, msg)
}

func (s *logStore) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.msgs)
}

// capturingHandler keeps every record at warning level and above in store
// and passes every record its inner handler wants on to it.
type capturingHandler struct {
	inner slog.Handler
	store *logStore
}

func (h *capturingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.inner.Enabled(ctx, l)
}

func (h *capturingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		h.store.add(r.Message)
	}
	if h.inner.Enabled(ctx, r.Level) {
		return h.inner.Handle(ctx, r)
	}
	return nil
}

func (h *capturingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &capturingHandler{inner: h.inner.WithAttrs(attrs), store: h.store}
}

func (h *capturingHandler) WithGroup(name string) slog.Handler {
	return &capturingHandler{inner: h.inner.WithGroup(name), store: h.store}
}
