package sse

import (
	"strings"
	"testing"
)

// BenchmarkClassifyShapes measures one classification of each SDK's
// payload shapes, whole and cut at DataPrefixBytes, as the rewriter now
// classifies every event with an ID.
func BenchmarkClassifyShapes(b *testing.B) {
	long := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("q", 2*DataPrefixBytes) + `"}}`
	for _, c := range []struct{ name, data string }{
		{"go_result", goResult}, {"go_nil_result", goNilResult}, {"go_error", goError},
		{"go_notification", goNotification}, {"go_request", goRequest},
		{"ts_result", tsResult}, {"ts_notification", tsNotification},
		{"py_result", pyResult}, {"py_notification", pyNotification},
		{"notification_cut", long[:DataPrefixBytes]},
	} {
		data, truncated := []byte(c.data), len(c.data) == DataPrefixBytes
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				Classify(nil, data, truncated)
			}
		})
	}
}
