package wasiclock

import (
	"testing"
	"time"
)

// TestUnixIsTheWallClock: Unix agrees with time.Now to the second.
func TestUnixIsTheWallClock(t *testing.T) {
	before := time.Now().Unix()
	got := int64(Unix())
	if after := time.Now().Unix(); got < before || got > after {
		t.Fatalf("Unix() = %d, outside [%d, %d]", got, before, after)
	}
}
