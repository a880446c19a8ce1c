package cursor

import (
	"strconv"
	"strings"
	"testing"
)

// TestSessionTagFixedWidth: log lines name a session by 8 hex digits,
// zero-padded, so that tags line up and compare as text.
func TestSessionTagFixedWidth(t *testing.T) {
	padded := 0
	for i := 0; i < 2000; i++ {
		tag := SessionTag("s-" + strconv.Itoa(i))
		if len(tag) != 8 || strings.Trim(tag, "0123456789abcdef") != "" {
			t.Fatalf("SessionTag(s-%d) = %q, want 8 lower-case hex digits", i, tag)
		}
		if tag[0] == '0' {
			padded++
		}
		if got := string(KeyOf("s-" + strconv.Itoa(i)).AppendTag([]byte("x"))); got != "x"+tag {
			t.Fatalf("AppendTag = %q, want x%s", got, tag)
		}
	}
	if padded == 0 {
		t.Fatal("no tag among 2000 starts with 0: the test no longer shows the padding")
	}
}
