package variants

import (
	"errors"
	"testing"
)

// recorder is a testing.TB that records whether the check failed.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatal(...any)          { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }
func (r *recorder) Logf(string, ...any)   {}

func TestCheck(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		wantErr  string
		wantFail bool
	}{
		{"valid variant passes", nil, "", false},
		{"valid variant rejected", errors.New("boom"), "", true},
		{"broken variant passes", nil, "port", true},
		{"broken for its reason", errors.New("bad port 8080"), "port", false},
		{"broken for another reason", errors.New("bad host"), "port", true},
	}
	for _, tc := range cases {
		r := &recorder{TB: t}
		Check(r, tc.err, tc.wantErr)
		if r.failed != tc.wantFail {
			t.Errorf("%s: failed=%t, want %t", tc.name, r.failed, tc.wantFail)
		}
	}
}
