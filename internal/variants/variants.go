// Package variants checks the variants of a deployment artifact that its
// tests derive by editing it: a broken variant must be rejected, and for the
// reason it was made for; a valid variant must pass.
package variants

import (
	"strings"
	"testing"
)

// Check reports through t whether err, the check's verdict on a variant,
// is right: with wantErr "" the variant is valid and err must be nil;
// otherwise err must contain wantErr.
func Check(t testing.TB, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("a valid variant was rejected: %v", err)
	case wantErr == "":
	case err == nil:
		t.Fatal("the broken variant passed the check")
	case !strings.Contains(err.Error(), wantErr):
		t.Fatalf("failed for another reason than expected (%q):\n%v", wantErr, err)
	default:
		t.Logf("rejected: %v", err)
	}
}
